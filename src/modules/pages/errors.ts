// Every way the pages area refuses, by name. Codes and details are published; messages may change.
import { AppError, invalid, notFound, type ValidationIssue } from '../../platform/errors'

export const pageNotFound = (id: string) => notFound(`Bridge page ${id}`)
export const blockNotFound = (id: string) => notFound(`Block ${id}`)
export const templateNotFound = (slug: string) => notFound(`Template ${slug}`)
export const savedTemplateNotFound = (id: string) => notFound(`Saved template ${id}`)

export const pageSlugTaken = (slug: string, domain: string) =>
  new AppError('slug_taken', `The page slug "${slug}" is already in use on ${domain}; choose another or omit it to get a generated one`, { slug, domain })

export const unknownBlockType = (type: string, known: string[]) =>
  new AppError('unknown_block_type', `"${type}" is not a block type; block types: ${known.join(', ')} (GET /bridge-pages/block-types)`, { type, known })

export const blockTypeImmutable = (from: string, to: unknown) =>
  new AppError(
    'block_type_immutable',
    `A block's type cannot change (it is ${from}, the body says ${JSON.stringify(to)}); delete the block and append a ${String(to)} block instead`,
    { type: from },
  )

/** Field problems of a block, with paths inside `fields`. */
export const blockFieldsInvalid = (issues: ValidationIssue[]) =>
  invalid(
    'body',
    issues.map((i) => ({ path: i.path ? `fields.${i.path.replace(/\//g, '.')}` : 'fields', message: i.message })),
  )

export const pageInUse = (id: string, links: number) =>
  new AppError(
    'conflict',
    `Bridge page ${id} is shown by ${links} link${links === 1 ? '' : 's'} (bridgePageId); point ${links === 1 ? 'it' : 'them'} elsewhere first`,
    { id, links },
  )

/** Someone else changed the page while this change was being made; retried a few times before this. */
export const pageBusy = (id: string) => new AppError('conflict', `Bridge page ${id} changed while this change was being made; send it again`, { id })
