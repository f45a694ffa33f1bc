// PUT /links/upsert (contract 7.3): one call that makes sure a link exists as described. The link is found by
// its externalId, or by domain + slug when no externalId is sent; found, it is changed like a PATCH (only the
// fields sent change); not found, it is created like a POST. Both paths are the ordinary create and update,
// so the plan allowance, every field rule, the scope and the sandbox apply, and each emits its own event.
import { AppError, Issues } from '../../platform/errors'
import { type Caller, sandboxHides } from '../identity'
import { toHostname, usableDomain } from '../domains'
import type { LinksCtx } from './context'
import type { CreateLinkInput } from './model'
import type { LinkRow } from './port'
import { createLink, updateLink } from './service'
import type { LinkView } from './view'

/** The link the body names, as the caller may see it: a live link does not exist for a test key. */
async function matching(ctx: LinksCtx, caller: Caller, input: CreateLinkInput): Promise<LinkRow | undefined> {
  const workspaceId = caller.workspace.id
  let found: LinkRow | undefined
  if (input.externalId != null) found = await ctx.links.findByExternalId(workspaceId, input.externalId)
  else {
    const { domain } = usableDomain(ctx.config, ctx.served, workspaceId, input.domain)
    // A domain no link can be on (neither the pool's nor a hostname) is no query to send: the create refuses it.
    if (ctx.config.shortDomains.includes(domain) || toHostname(domain) !== null) found = await ctx.links.findBySlug(workspaceId, domain, input.slug!)
  }
  return found && !sandboxHides(caller, found) ? found : undefined
}

/** What a lost race looks like: another request created the link between our lookup and our insert. */
const lostRace = (err: unknown) => err instanceof AppError && (err.code === 'external_id_taken' || err.code === 'slug_taken' || err.code === 'not_found')

export async function upsertLink(ctx: LinksCtx, caller: Caller, input: CreateLinkInput): Promise<{ created: boolean; link: LinkView }> {
  if (input.externalId == null && input.slug === undefined) {
    const issues = new Issues()
    issues.add('externalId', 'send externalId, or slug (and domain, else the default one), to name the link to create or update')
    issues.throwIfAny()
  }
  // Two attempts: a concurrent upsert of the same link may create it after our lookup; the second lookup
  // then finds it. A conflict that stays (a link the caller cannot see holds the key) is answered as it is.
  for (let attempt = 1; ; attempt++) {
    const found = await matching(ctx, caller, input)
    try {
      if (found) return { created: false, link: await updateLink(ctx, caller, found.id, input) }
      return { created: true, link: await createLink(ctx, caller, input) }
    } catch (err) {
      if (attempt >= 2 || !lostRace(err)) throw err
    }
  }
}
