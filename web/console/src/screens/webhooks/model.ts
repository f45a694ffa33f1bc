// The shapes the webhooks screens read from /v1/webhooks (docs/webhooks.md, spec 2.5 and 2.6), and the
// few facts derived from them that more than one screen shows.
import type { Body, Data, Schema } from '../../api-types'

/** An endpoint as /v1/webhooks answers it (the document's WebhookEndpoint), and with its secret, shown once. */
export type Endpoint = Schema<'WebhookEndpoint'>
export type EndpointWithSecret = Schema<'WebhookEndpointWithSecret'>
export type Format = Endpoint['format']
export type Filters = NonNullable<Endpoint['filters']>
export type FilterRule = Filters['rules'][number]
export type FilterOp = FilterRule['op']
/** The operators in the order the form offers them: every one the API takes (the check below keeps it so). */
export const FILTER_OPS = [
  'eq',
  'neq',
  'in',
  'nin',
  'contains',
  'not_contains',
  'starts_with',
  'gt',
  'gte',
  'lt',
  'lte',
  'exists',
  'not_exists',
] as const satisfies readonly FilterOp[]
// Types only: an operator the API adds and the list lacks makes `false`, which `Holds` refuses.
type Holds<T extends true> = T
export type FilterOpsCovered = Holds<[Exclude<FilterOp, (typeof FILTER_OPS)[number]>] extends [never] ? true : false>

export type Delivery = Schema<'WebhookDelivery'>
export type DeliveryStatus = Delivery['status']
export type DeliveryDetail = Schema<'WebhookDeliveryDetail'>
export type Attempt = DeliveryDetail['attempts'][number]
/** GET /v1/webhooks/info: the event catalogue and the delivery settings. */
export type Info = Data<'/webhooks/info', 'get'>
export type ReplayAllResult = Data<'/webhooks/{id}/replay-all', 'post'>
/** POST /v1/webhooks and PATCH /v1/webhooks/{id} bodies. */
export type CreateBody = Body<'/webhooks', 'post'>
export type PatchBody = Body<'/webhooks/{id}', 'patch'>

export type EndpointState = 'active' | 'paused' | 'disabled'

/** Paused is a person's choice; disabled is lnk's (410, or too many failures), and says why. */
export const endpointState = (e: Endpoint): EndpointState => (e.isActive ? 'active' : e.disabledReason ? 'disabled' : 'paused')

export const STATE_LABEL: Record<EndpointState, string> = { active: 'Active', paused: 'Paused', disabled: 'Disabled' }
export const STATE_BADGE: Record<EndpointState, string> = { active: 'ok', paused: 'muted', disabled: 'bad' }
export const DELIVERY_BADGE: Record<DeliveryStatus, string> = { pending: 'muted', success: 'ok', failed: 'bad', dead: 'bad' }

/** `area.*` for each dot prefix of the catalogue's types, as the API accepts them. */
export function areaPatterns(events: string[]): string[] {
  const areas = new Set<string>()
  for (const type of events) {
    const dot = type.lastIndexOf('.')
    if (dot > 0) areas.add(`${type.slice(0, dot)}.*`)
  }
  return [...areas]
}

/** A timestamp in the viewer's own time zone. */
export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' }) : '—')

export const endpointPath = (id: string) => `/webhooks/${encodeURIComponent(id)}`
export const deliveryPath = (endpointId: string, deliveryId: string) => `${endpointPath(endpointId)}/deliveries/${encodeURIComponent(deliveryId)}`
