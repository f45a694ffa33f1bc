// Every way the domains area refuses, by name. Codes and details are published; messages may change.
import { AppError, notFound } from '../../platform/errors'

export const domainNotFound = (id: string) => notFound(`Domain ${id}`)

export const domainTakenHere = (domain: string, id: string | undefined) =>
  new AppError('domain_taken', `${domain} is already a domain of this workspace${id ? ` (${id})` : ''}; verify that one, or delete it first`, {
    domain,
    ...(id ? { id } : {}),
  })

export const domainVerifiedElsewhere = (domain: string) =>
  new AppError('domain_taken', `${domain} is verified by another workspace; it must delete it before this one can add it`, { domain })

export const domainHasLinks = (domain: string, links: number) =>
  new AppError(
    'domain_has_links',
    `${domain} still has ${links} link${links === 1 ? '' : 's'}; delete or move them, or pass archiveLinks=true to archive them with the domain`,
    { domain, links },
  )

export const verifyThrottled = (retryAfterSeconds: number) =>
  new AppError(
    'verify_throttled',
    `This domain was checked moments ago; check again in ${retryAfterSeconds} s`,
    { retryAfterSeconds },
    { 'Retry-After': String(retryAfterSeconds) },
  )

/** Domains are live configuration: a sandboxed key reads them but never changes them. */
export const testKeyChangesDomain = () =>
  new AppError(
    'forbidden',
    'A test key cannot add, change, verify or delete domains; use a live key (test keys may read domains and make test links on verified ones)',
  )

export const domainOutOfScope = (domain: string) =>
  new AppError('out_of_scope', `${domain} is outside the key's scope filters (domains); use a key whose scope covers it`, { domain })
