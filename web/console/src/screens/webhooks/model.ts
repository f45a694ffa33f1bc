// The shapes the webhooks screens read from /v1/webhooks (docs/webhooks.md, spec 2.5 and 2.6), and the
// few facts derived from them that more than one screen shows.
export type Format = 'standard' | 'slack' | 'discord'
export type DeliveryStatus = 'pending' | 'success' | 'failed' | 'dead'
export const FILTER_OPS = ['eq', 'neq', 'in', 'nin', 'contains', 'not_contains', 'starts_with', 'gt', 'gte', 'lt', 'lte', 'exists', 'not_exists'] as const
export type FilterOp = (typeof FILTER_OPS)[number]

export interface FilterRule {
  field: string
  op: FilterOp
  value?: unknown
}

export interface Filters {
  match: 'all' | 'any'
  events: string[] | null
  rules: FilterRule[]
}

export interface Endpoint {
  id: string
  name: string | null
  url: string
  events: string[]
  format: Format
  mode: 'live' | 'test'
  isActive: boolean
  failureCount: number
  disabledReason: string | null
  customHeaderNames: { name: string; hint: string }[]
  filters: Filters | null
  transform: { kind: 'template'; template: Record<string, unknown> } | null
  batchEnabled: boolean
  batchWindowSeconds: number
  maxConcurrent: number
  mtlsEnabled: boolean
  previousSecretExpiresAt: string | null
  createdAt: string
  updatedAt: string
}

export type EndpointWithSecret = Endpoint & { secret: string }

export interface Delivery {
  id: string
  endpointId: string
  event: string
  eventId: string | null
  status: DeliveryStatus
  responseStatus: number | null
  duration: number | null
  attempt: number
  maxAttempts: number
  batchSize: number
  nextAttemptAt: string | null
  deliveredAt?: string
  errorMessage: string | null
  replayOfId: string | null
  replayable: boolean
  idempotencyKey: string
  createdAt: string
}

export interface Attempt {
  attempt: number
  startedAt: string
  duration: number | null
  responseStatus: number | null
  errorMessage: string | null
  address: string | null
}

export interface DeliveryDetail extends Delivery {
  payload: Record<string, unknown> | null
  request: { method: string; url: string; headers: Record<string, string>; body: string } | null
  response: { status: number | null; headers: Record<string, string>; body: string; bodyTruncated: boolean } | null
  attempts: Attempt[]
}

export interface Info {
  events: string[]
  mtlsConfigured: boolean
  timeoutSeconds: number
  maxAttempts: { live: number; test: number }
}

export interface ReplayAllResult {
  queued: number
  remainingDead: number
  deliveryIds: string[]
}

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
