// The checks of a link's fields (contract section 4) and their normalising into columns, shared by create
// and update so that both refuse and store a field alike.
import type { Issues } from '../../platform/errors'
import type { Caller } from '../identity'
import { unusableDomainMessage, usableDomain } from '../domains'
import type { LinksCtx } from './context'
import type { CreateLinkInput } from './model'
import type { NewLink } from './port'
import { isReservedSlug, RESERVED_SLUGS } from './slug'

export function checkUrl(ctx: LinksCtx, issues: Issues, path: string, value: string | null | undefined, refuseOwnDomains: boolean) {
  if (value == null) return
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return issues.add(path, 'must be an absolute URL such as https://example.com/page')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return issues.add(path, 'must use http or https')
  if (value.length > 2048) return issues.add(path, 'must be at most 2048 characters')
  // A trailing dot names the same host (go.example. is go.example).
  const host = `${url.hostname.replace(/\.$/, '')}${url.port ? `:${url.port}` : ''}`.toLowerCase()
  if (refuseOwnDomains && (ctx.config.shortDomains.includes(host) || ctx.served.get(host) !== undefined)) {
    issues.add(path, 'must not point at a short link of this service (it would loop)')
  }
}

export function checkSlug(issues: Issues, slug: string | undefined) {
  if (slug === undefined) return
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(slug)) issues.add('slug', 'must be 1-64 characters of A-Z a-z 0-9 _ -')
  else if (isReservedSlug(slug)) issues.add('slug', `"${slug}" is reserved; reserved slugs: ${RESERVED_SLUGS.join(', ')}`)
}

export async function checkDomain(ctx: LinksCtx, caller: Caller, issues: Issues, domain: string | undefined): Promise<string> {
  const chosen = usableDomain(ctx.config, ctx.served, caller.workspace.id, domain)
  if (!chosen.usable) issues.add('domain', unusableDomainMessage(ctx.config, domain))
  return chosen.domain
}

/** A page of the workspace in the link's own mode: a test link shows test pages, a live link live ones. */
export async function checkBridgePage(ctx: LinksCtx, caller: Caller, issues: Issues, id: string | null | undefined) {
  if (id == null) return
  const page = await ctx.bridgePages.find(caller.workspace.id, id)
  if (!page) issues.add('bridgePageId', `${id} is not a bridge page of this workspace (GET /bridge-pages lists them)`)
  else if (page.isTest !== (caller.mode === 'test'))
    issues.add('bridgePageId', `${id} is a ${page.isTest ? 'test' : 'live'} page; a ${caller.mode} link shows ${caller.mode} pages`)
}

export function parseExpiry(ctx: LinksCtx, issues: Issues, value: string | null | undefined): number | null | undefined {
  if (value === undefined || value === null) return value
  const ms = Date.parse(value)
  if (!Number.isFinite(ms)) return (issues.add('expiresAt', 'must be an ISO 8601 timestamp'), undefined)
  if (ms <= ctx.clock.now()) return (issues.add('expiresAt', 'must be in the future'), undefined)
  return ms
}

/** What `search` matches, lower-cased here (Unicode-aware) so the query needs no case folding. */
export const searchTextOf = (l: Pick<NewLink, 'slug' | 'title' | 'destinationUrl' | 'tags'>) =>
  [l.slug, l.title ?? '', l.destinationUrl, ...(l.tags ?? [])].join('\n').toLowerCase()

const cleanTags = (tags: string[] | undefined) => (tags === undefined ? undefined : [...new Set(tags.map((t) => t.trim()).filter(Boolean))])

const hashPassword = (password: string) => Bun.password.hash(password, { algorithm: 'argon2id' })

/** Columns shared by create and update, from fields that were sent. */
export async function columnsFrom(input: Partial<CreateLinkInput>): Promise<Partial<NewLink>> {
  const out: Partial<NewLink> = {}
  const copy = [
    'destinationUrl',
    'title',
    'description',
    'folderId',
    'campaignId',
    'redirectStatus',
    'fallbackUrl',
    'clickLimit',
    'uniqueIpLimit',
    'publicStatsEnabled',
    'utmSource',
    'utmMedium',
    'utmCampaign',
    'utmTerm',
    'utmContent',
    'ogTitle',
    'ogDescription',
    'ogImageUrl',
    'twitterCard',
    'deepLinkEnabled',
    'captchaEnabled',
    'consentRequired',
    'conversionTracking',
    'bridgePageId',
  ] as const
  for (const key of copy) if (input[key] !== undefined) (out as Record<string, unknown>)[key] = input[key]
  if (input.tags !== undefined) out.tags = cleanTags(input.tags)
  if (input.password !== undefined) out.passwordHash = input.password === null ? null : await hashPassword(input.password)
  return out
}
