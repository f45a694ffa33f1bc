// Every way the links area refuses, by name. Codes, messages and details are published: change them only
// as the contract allows (messages may change, codes and details not).
import { AppError, invalid, notFound, type ValidationIssue } from '../../platform/errors'

export const linkNotFound = (id: string) => notFound(`Link ${id}`)

export const slugTaken = (slug: string, domain: string) =>
  new AppError('slug_taken', `The slug "${slug}" is already in use on ${domain}; choose another or omit it to get a generated one`, { slug, domain })

/** Another link of the workspace carries this externalId (contract 7.3). */
export const externalIdTaken = (externalId: string) =>
  new AppError('external_id_taken', `Another link of this workspace has the externalId "${externalId}"; externalIds are unique within a workspace`, {
    externalId,
  })

/** The workspace's allowance of live links for the month is spent. */
export const planLimitReached = (limit: number) =>
  new AppError('plan_limit_reached', `This workspace has created its ${limit} live links for this month; test links do not count`, { limit })

/** A write to a link outside the key's scope filters (reads of one answer linkNotFound). */
export const outOfScope = () =>
  new AppError('out_of_scope', "This link is outside the key's scope filters (domains/tags/folders); use a key whose scope covers it")

export const qrPageTooLarge = (maxPerPage: number) =>
  new AppError('qr_page_too_large', `include=qr allows at most perPage=${maxPerPage}; ask for fewer links per page`, { maxPerPage })

export const tooManyBulkLinks = (max: number) => invalid('body', [{ path: 'links', message: `at most ${max} links per call` }])

/**
 * One item of a bulk create that does not match the link schema; the others go ahead. Its message names the
 * item and its details carry the issues without a location, as bulk results have always been published.
 */
export const bulkItemInvalid = (index: number, issues: ValidationIssue[]) =>
  new AppError('validation_failed', `links.${index}: ${issues.map((x) => `${x.path || 'item'}: ${x.message}`).join('; ')}`, { issues })

/** A refusal as one result of a bulk call carries it: the error object of the envelope, in the list. */
export const bulkError = (err: AppError) => ({ code: err.code, message: err.message, details: err.details })
