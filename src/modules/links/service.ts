// Link logic shared by HTTP and jobs: creation (single and bulk) with the plan allowance, listing, reads,
// partial updates and deletion. The field checks are in fields.ts, the Link view in view.ts.
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { utcMonth } from '../../platform/clock'
import { type Caller, sandboxHides } from '../identity'
import { AppError, Issues, pointerToPath } from '../../platform/errors'
import { bulkError, bulkItemInvalid, externalIdTaken, linkNotFound, outOfScope, planLimitReached, slugTaken, tooManyBulkLinks } from './errors'
import { base62, uuidV7 } from '../../platform/random'
import { isReservedSlug } from './slug'
import { CreateLinkBody, READ_ONLY_LINK_FIELDS, type CreateLinkInput, type UpdateLinkInput } from './model'
import { toHostname } from '../domains'
import { LinkWriteRefused, type LinkRow, type NewLink } from './port'
import type { LinksCtx } from './context'
import { checkBridgePage, checkDomain, checkSlug, checkUrl, columnsFrom, parseExpiry, searchTextOf } from './fields'
import { checkRouting } from './routing-fields'
import { checkFolder } from './folder-check'
import { type LinkView, toLink, withQr } from './view'
import { externalIdOf } from './external-id'

export const BULK_MAX = 1000
/** Bulk items are checked one by one (a bad one must not reject the others), by a compiled checker. */
const checkCreateBody = TypeCompiler.Compile(CreateLinkBody)
const GENERATED_SLUG_LENGTH = 7

async function generateSlug(ctx: LinksCtx, domain: string, taken: Set<string>): Promise<string> {
  for (let length = GENERATED_SLUG_LENGTH; ; length++) {
    const candidates = Array.from({ length: 8 }, () => base62(length)).filter((s) => !taken.has(s) && !isReservedSlug(s))
    const inUse = await ctx.links.slugsInUse(domain, candidates)
    const free = candidates.find((s) => !inUse.has(s))
    if (free) return free
  }
}

interface PreparedLink {
  row: NewLink
  include: boolean
}

async function prepareCreate(ctx: LinksCtx, caller: Caller, input: CreateLinkInput, generatedSlugs: Set<string>): Promise<PreparedLink> {
  const issues = new Issues()
  checkUrl(ctx, issues, 'destinationUrl', input.destinationUrl, true)
  checkUrl(ctx, issues, 'fallbackUrl', input.fallbackUrl, true)
  checkUrl(ctx, issues, 'ogImageUrl', input.ogImageUrl, false)
  checkSlug(issues, input.slug)
  await checkBridgePage(ctx, caller, issues, input.bridgePageId)
  await checkFolder(ctx, caller, issues, input.folderId)
  const routing = checkRouting(ctx, issues, input, null)
  const domain = await checkDomain(ctx, caller, issues, input.domain)
  const expiresAt = parseExpiry(ctx, issues, input.expiresAt)
  if (input.include && input.include.some((i) => i !== 'qr')) issues.add('include', 'the only allowed value is "qr"')
  issues.throwIfAny()
  const slug = input.slug ?? (await generateSlug(ctx, domain, generatedSlugs))
  generatedSlugs.add(slug)
  const now = ctx.clock.now()
  const row: NewLink = {
    id: uuidV7(),
    workspaceId: caller.workspace.id,
    domain,
    slug,
    destinationUrl: input.destinationUrl,
    tags: [],
    redirectStatus: 302,
    publicStatsEnabled: false,
    deepLinkEnabled: false,
    captchaEnabled: false,
    consentRequired: false,
    conversionTracking: false,
    isActive: true,
    isArchived: false,
    isTest: caller.mode === 'test',
    totalClicks: 0,
    uniqueClicks: 0,
    createdByKeyId: caller.key.id,
    createdAt: now,
    updatedAt: now,
    searchText: '',
    ...(await columnsFrom(input)),
    routingRules: routing.routingRules ?? null,
    variants: routing.variants ?? null,
    expiresAt: expiresAt ?? null,
    externalId: input.externalId ?? null,
  }
  row.searchText = searchTextOf(row)
  if (!inScope(caller, row)) throw outOfScope()
  return { row, include: input.include?.includes('qr') ?? false }
}

/** The refusal a write transaction answered for `row`, as the error it is. */
function refusal(ctx: LinksCtx, r: LinkWriteRefused, row: NewLink): AppError {
  if (r.reason === 'external_id_taken') return externalIdTaken(row.externalId ?? '')
  return r.reason === 'slug_taken' ? slugTaken(row.slug, row.domain) : planLimitReached(ctx.config.planLinksPerMonth)
}

function usageOf(ctx: LinksCtx, caller: Caller) {
  return { workspaceId: caller.workspace.id, month: utcMonth(ctx.clock.now()), allowance: ctx.config.planLinksPerMonth || null }
}

function createdEvent(ctx: LinksCtx) {
  return (row: LinkRow) => ({
    type: 'link.created',
    workspaceId: row.workspaceId,
    mode: row.isTest ? ('test' as const) : ('live' as const),
    data: toLink(ctx, row),
  })
}

export async function createLink(ctx: LinksCtx, caller: Caller, input: CreateLinkInput): Promise<LinkView> {
  const prepared = await prepareCreate(ctx, caller, input, new Set())
  const [result] = await ctx.links.insertMany(
    [{ row: prepared.row, event: createdEvent(ctx), countsTowardsPlan: !prepared.row.isTest }],
    usageOf(ctx, caller),
    ctx.clock.now(),
  )
  if (result instanceof LinkWriteRefused) throw refusal(ctx, result, prepared.row)
  ctx.bus.emit('link.changed', { domain: result!.domain, slug: result!.slug })
  return withQr(ctx, toLink(ctx, result!), prepared.include)
}

export type BulkResult = { ok: true; link: LinkView } | { ok: false; error: ReturnType<typeof bulkError> }

/** Up to 1000 links; one result per input, in order. Valid ones are written in one transaction. */
export async function bulkCreate(ctx: LinksCtx, caller: Caller, items: unknown[]): Promise<BulkResult[]> {
  if (items.length > BULK_MAX) throw tooManyBulkLinks(BULK_MAX)
  const results: (BulkResult | PreparedLink)[] = []
  const generated = new Set<string>()
  for (const [i, item] of items.entries()) {
    if (!checkCreateBody.Check(item)) {
      const issues = [...checkCreateBody.Errors(item)].slice(0, 10).map((e) => ({ path: pointerToPath(e.path), message: e.message }))
      results.push({ ok: false, error: bulkError(bulkItemInvalid(i, issues)) })
      continue
    }
    try {
      results.push(await prepareCreate(ctx, caller, item, generated))
    } catch (err) {
      if (!(err instanceof AppError)) throw err
      results.push({ ok: false, error: bulkError(err) })
    }
  }
  const valid = results.filter((r): r is PreparedLink => 'row' in r)
  // Two inputs asking for the same slug: the first wins, like two requests would.
  const written = await ctx.links.insertMany(
    valid.map((p) => ({ row: p.row, event: createdEvent(ctx), countsTowardsPlan: !p.row.isTest })),
    usageOf(ctx, caller),
    ctx.clock.now(),
  )
  const out: BulkResult[] = []
  let w = 0
  for (const r of results) {
    if (!('row' in r)) {
      out.push(r)
      continue
    }
    const outcome = written[w++]!
    if (outcome instanceof LinkWriteRefused) {
      out.push({ ok: false, error: bulkError(refusal(ctx, outcome, r.row)) })
    } else {
      ctx.bus.emit('link.changed', { domain: outcome.domain, slug: outcome.slug })
      out.push({ ok: true, link: await withQr(ctx, toLink(ctx, outcome), r.include) })
    }
  }
  return out
}

/** Whether the calling key's scope filters cover the link (a key without filters sees everything). */
export function inScope(caller: Pick<Caller, 'key'>, link: Pick<NewLink, 'domain' | 'tags' | 'folderId'>): boolean {
  const scope = caller.key.scopeFilters
  if (!scope) return true
  if (scope.domains?.length && !scope.domains.includes(link.domain)) return false
  if (scope.tags?.length && !(link.tags ?? []).some((t) => scope.tags!.includes(t))) return false
  if (scope.folders?.length && !(link.folderId && scope.folders.includes(link.folderId))) return false
  return true
}

/**
 * A link of the caller's workspace. A live link does not exist for a test key (404, reads and writes alike).
 * Out of the key's scope it does not exist for reads (404) and is refused for writes (403 out_of_scope).
 */
async function findOwn(ctx: LinksCtx, caller: Caller, id: string, purpose: 'read' | 'write' = 'read'): Promise<LinkRow> {
  const externalId = externalIdOf(id)
  const row = externalId
    ? await ctx.links.findByExternalId(caller.workspace.id, externalId)
    : /^[0-9a-f-]{36}$/i.test(id)
      ? await ctx.links.findById(caller.workspace.id, id.toLowerCase())
      : undefined
  if (!row || sandboxHides(caller, row)) throw linkNotFound(id)
  if (!inScope(caller, row)) {
    if (purpose === 'read') throw linkNotFound(id)
    throw outOfScope()
  }
  return row
}

export async function getLink(ctx: LinksCtx, caller: Caller, id: string, includeQr = false): Promise<LinkView> {
  return withQr(ctx, toLink(ctx, await findOwn(ctx, caller, id)), includeQr)
}

/** Sent in a PATCH but never applied: the Link's read-only fields (a fetched Link sent back) and include. */
const NOT_APPLIED = new Set<string>([...READ_ONLY_LINK_FIELDS, 'include'])

/**
 * `hashed`: the password's hash, made once by a caller applying one body to many links (argon2id is slow on
 * purpose); the body's password then only names the field among the changes.
 */
export async function updateLink(
  ctx: LinksCtx,
  caller: Caller,
  id: string,
  body: UpdateLinkInput,
  hashed?: { passwordHash: string | null },
): Promise<LinkView> {
  const current = await findOwn(ctx, caller, id, 'write')
  const input = Object.fromEntries(Object.entries(body).filter(([key]) => !NOT_APPLIED.has(key))) as Omit<
    UpdateLinkInput,
    (typeof READ_ONLY_LINK_FIELDS)[number] | 'include'
  >
  // A value equal to the stored one is no change and is not checked again: a Link sent back as fetched must
  // not be refused for an expiry now past, or a domain since dropped from the pool.
  const issues = new Issues()
  if (input.destinationUrl !== undefined && input.destinationUrl !== current.destinationUrl) checkUrl(ctx, issues, 'destinationUrl', input.destinationUrl, true)
  if (input.fallbackUrl !== current.fallbackUrl) checkUrl(ctx, issues, 'fallbackUrl', input.fallbackUrl, true)
  if (input.ogImageUrl !== current.ogImageUrl) checkUrl(ctx, issues, 'ogImageUrl', input.ogImageUrl, false)
  if (input.slug !== current.slug) checkSlug(issues, input.slug)
  if (input.bridgePageId !== current.bridgePageId) await checkBridgePage(ctx, caller, issues, input.bridgePageId)
  if (input.folderId !== undefined && input.folderId !== current.folderId) await checkFolder(ctx, caller, issues, input.folderId)
  const routing = checkRouting(ctx, issues, input, current)
  const domain =
    input.domain === undefined || (toHostname(input.domain) ?? input.domain.toLowerCase()) === current.domain
      ? current.domain
      : await checkDomain(ctx, caller, issues, input.domain)
  const sameExpiry = typeof input.expiresAt === 'string' && Date.parse(input.expiresAt) === current.expiresAt
  const expiresAt = sameExpiry ? current.expiresAt : parseExpiry(ctx, issues, input.expiresAt)
  issues.throwIfAny()

  const patch: Partial<NewLink> = { ...(await columnsFrom(hashed ? { ...input, password: undefined } : input)), ...routing, updatedAt: ctx.clock.now() }
  if (hashed) patch.passwordHash = hashed.passwordHash
  if (input.externalId !== undefined) patch.externalId = input.externalId
  if (input.slug !== undefined) patch.slug = input.slug
  if (input.domain !== undefined) patch.domain = domain
  if (input.expiresAt !== undefined) patch.expiresAt = expiresAt ?? null
  if (input.isActive !== undefined) patch.isActive = input.isActive
  if (input.isArchived !== undefined) patch.isArchived = input.isArchived
  patch.searchText = searchTextOf({ ...current, ...patch })
  // A scoped key cannot move a link out of its own reach.
  const folderId = patch.folderId !== undefined ? patch.folderId : current.folderId
  if (!inScope(caller, { domain: patch.domain ?? current.domain, tags: patch.tags ?? current.tags, folderId })) throw outOfScope()
  const changes = Object.keys(input)

  const result = await ctx.links.update(
    current.id,
    patch,
    (row) => ({ type: 'link.updated', workspaceId: row.workspaceId, mode: row.isTest ? 'test' : 'live', data: { ...toLink(ctx, row), changes } }),
    ctx.clock.now(),
  )
  if (result instanceof LinkWriteRefused) throw refusal(ctx, result, { ...current, ...patch } as NewLink)
  if (!result) throw linkNotFound(id)
  ctx.bus.emit('link.changed', { domain: current.domain, slug: current.slug })
  ctx.bus.emit('link.changed', { domain: result.domain, slug: result.slug })
  return withQr(ctx, toLink(ctx, result), body.include?.includes('qr') ?? false)
}

export async function deleteLink(ctx: LinksCtx, caller: Caller, id: string) {
  const current = await findOwn(ctx, caller, id, 'write')
  const view = toLink(ctx, current)
  const deleted = await ctx.links.delete(
    current.id,
    {
      type: 'link.deleted',
      workspaceId: current.workspaceId,
      mode: current.isTest ? 'test' : 'live',
      data: { id: view.id, slug: view.slug, domain: view.domain, shortUrl: view.shortUrl, destinationUrl: view.destinationUrl },
    },
    ctx.clock.now(),
  )
  if (!deleted) throw linkNotFound(id)
  ctx.bus.emit('link.changed', { domain: current.domain, slug: current.slug })
  return { id: current.id, deleted: true as const }
}
