// Routing rules and variants set on a link for the redirect tests, through PATCH /v1/links/{id} as a client
// sets them; answers what the link now stores, ids included.
import type { RoutingRule, Variant } from '../../src/db/schema'
import { body } from '../helpers'
import type { Api } from './_redirect'

export type RuleInput = Omit<RoutingRule, 'id' | 'name' | 'match'> & Partial<Pick<RoutingRule, 'name' | 'match'>>
export type VariantInput = Omit<Variant, 'id'>

export async function setRouting(
  api: Pick<Api, 'patch'>,
  link: { id: string },
  routing: { routingRules?: RuleInput[] | null; variants?: VariantInput[] | null },
): Promise<{ routingRules: RoutingRule[] | null; variants: Variant[] | null }> {
  const res = await api.patch(link.id, routing)
  const payload = await body(res)
  if (res.status !== 200) throw new Error(`PATCH answered ${res.status}: ${JSON.stringify(payload)}`)
  return { routingRules: payload.data.routingRules, variants: payload.data.variants }
}
