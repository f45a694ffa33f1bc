// Routing rules and variants stored on a link for tests. Until the links API accepts the two fields, they are
// written through the links repo (the same write a PATCH makes, with its event) and the redirect's cached
// copy is dropped by the notice a PATCH sends.
import type { RoutingRule, Variant } from '../../src/db/schema'
import type { TestEnv } from '../helpers'

export type RuleInput = Omit<RoutingRule, 'id' | 'name' | 'match'> & Partial<Pick<RoutingRule, 'id' | 'name' | 'match'>>
export type VariantInput = Omit<Variant, 'id'> & Partial<Pick<Variant, 'id'>>

let n = 0
const id = (prefix: string) => `${prefix}_${(++n).toString(36).padStart(6, '0')}`

/** Stores the rules and variants on the link (null clears); answers them with their ids. */
export async function setRouting(
  env: Pick<TestEnv, 'rt'>,
  link: { id: string; workspaceId?: string; domain: string; slug: string; isTest?: boolean },
  routing: { routingRules?: RuleInput[] | null; variants?: VariantInput[] | null },
): Promise<{ routingRules: RoutingRule[] | null; variants: Variant[] | null }> {
  const routingRules = routing.routingRules?.map((r) => ({ id: r.id ?? id('rr'), name: r.name ?? null, match: r.match ?? 'all', ...r })) ?? null
  const variants = routing.variants?.map((v) => ({ id: v.id ?? id('var'), ...v })) ?? null
  const { links } = env.rt.modules
  const row = await links.repo.update(
    link.id,
    { routingRules, variants },
    (r) => ({
      type: 'link.updated',
      workspaceId: r.workspaceId,
      mode: r.isTest ? 'test' : 'live',
      data: { link: { id: r.id, domain: r.domain, slug: r.slug } },
    }),
    env.rt.clock.now(),
  )
  if (!row || !('id' in row)) throw new Error(`link ${link.id} could not be updated`)
  env.rt.bus.emit('link.changed', { domain: link.domain, slug: link.slug })
  return { routingRules, variants }
}
