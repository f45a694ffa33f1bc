// REST-hook subscriptions (Zapier's and Make's instant triggers). A subscription is a webhook endpoint of
// kind rest_hook with one event and the standard format, so its calls go through the webhooks area's
// pipeline unchanged: signed in both schemes, retried on the same schedule, bounded by maxConcurrent, and
// recorded as deliveries. A 410 answer removes it (webhooks/repo-attempts.ts).
import { iso } from '../../platform/clock'
import { Issues } from '../../platform/errors'
import { newId } from '../../platform/random'
import { checkUrl } from '../../net/egress'
import type { Caller } from '../identity'
import { type EndpointRow, deliveriesOf, deliveryOf, newEndpoint, type DeliveriesQuery, generateSecret, egressPolicy, type WebhooksCtx } from '../webhooks'
import { subscriptionNotFound, tooManySubscriptions } from './errors'
import { HOOK_URL_FIELDS, MAX_SUBSCRIPTIONS, SUBSCRIBABLE_EVENTS } from './model'
import type { SamplesCtx } from './samples'

export interface AutomationsCtx {
  /** The webhooks area's context: its repo, caches and egress policy. */
  webhooks: WebhooksCtx
  samples: SamplesCtx
}

export interface SubscribeInput {
  event: unknown
  hookUrl?: unknown
  targetUrl?: unknown
  target_url?: unknown
  url?: unknown
}

export function toSubscription(row: EndpointRow) {
  return {
    id: row.id,
    event: row.events[0] ?? '',
    hookUrl: row.url,
    mode: row.mode,
    isActive: row.isActive,
    failureCount: row.failureCount,
    disabledReason: row.disabledReason,
    createdAt: iso(row.createdAt),
  }
}

/** The hook address under whichever name it came; several names must agree. */
function hookUrlOf(input: SubscribeInput, issues: Issues): { field: string; url: string } | null {
  const given = HOOK_URL_FIELDS.filter((f) => input[f] !== undefined).map((field) => ({ field, value: input[field] }))
  if (!given.length) return (issues.add('hookUrl', `is required: the URL to POST events to (also accepted as ${HOOK_URL_FIELDS.slice(1).join(', ')})`), null)
  const bad = given.find((g) => typeof g.value !== 'string' || !g.value)
  if (bad) return (issues.add(bad.field, 'must be a non-empty string: the URL to POST events to'), null)
  if (new Set(given.map((g) => g.value)).size > 1) return (issues.add(given[1]!.field, `differs from ${given[0]!.field}; send the hook URL once`), null)
  return { field: given[0]!.field, url: given[0]!.value as string }
}

export async function subscribe(ctx: AutomationsCtx, caller: Caller, input: SubscribeInput) {
  const { webhooks } = ctx
  const issues = new Issues()
  if (typeof input.event !== 'string' || !SUBSCRIBABLE_EVENTS.includes(input.event)) {
    issues.add('event', `must be one of ${SUBSCRIBABLE_EVENTS.join(', ')}`)
  }
  const hook = hookUrlOf(input, issues)
  if (hook) {
    const checked = await checkUrl(hook.url, egressPolicy(webhooks), webhooks.state.resolver ?? undefined)
    if (!checked.ok) issues.add(hook.field, checked.reason)
  }
  issues.throwIfAny()
  if ((await webhooks.webhooks.countEndpoints(caller.workspace.id, 'rest_hook')) >= MAX_SUBSCRIPTIONS) throw tooManySubscriptions()
  const now = webhooks.clock.now()
  const secret = generateSecret()
  const row = await webhooks.webhooks.insertEndpoint(
    newEndpoint({
      id: newId('hook'),
      kind: 'rest_hook',
      workspaceId: caller.workspace.id,
      url: hook!.url,
      events: [input.event as string],
      mode: caller.mode,
      secret,
      now,
    }),
  )
  webhooks.state.endpointChanged()
  return { ...toSubscription(row), secret }
}

/** The caller's mode only: a test key's Zap sees test subscriptions, a live key's live ones. */
export async function listSubscriptions(ctx: AutomationsCtx, caller: Caller) {
  return (await ctx.webhooks.webhooks.listEndpoints(caller.workspace.id, 'rest_hook', caller.mode)).map(toSubscription)
}

/** A subscription of the caller's workspace (a test key sees test ones only), removed ones included: their deliveries stay readable. */
async function findOwn(ctx: AutomationsCtx, caller: Caller, id: string): Promise<EndpointRow> {
  const row = await ctx.webhooks.webhooks.findEndpoint(caller.workspace.id, id)
  if (!row || row.kind !== 'rest_hook' || (caller.mode === 'test' && row.mode !== 'test')) throw subscriptionNotFound(id)
  return row
}

/** Idempotent: removing a removed subscription is done already. */
export async function unsubscribe(ctx: AutomationsCtx, caller: Caller, id: string): Promise<void> {
  const row = await findOwn(ctx, caller, id)
  if (row.deletedAt !== null) return
  if (await ctx.webhooks.webhooks.removeRestHook(row.id, 'Unsubscribed', ctx.webhooks.clock.now())) ctx.webhooks.state.endpointChanged()
}

export async function subscriptionDeliveries(ctx: AutomationsCtx, caller: Caller, id: string, query: DeliveriesQuery) {
  return deliveriesOf(ctx.webhooks, await findOwn(ctx, caller, id), query)
}

export async function subscriptionDelivery(ctx: AutomationsCtx, caller: Caller, id: string, deliveryId: string) {
  return deliveryOf(ctx.webhooks, await findOwn(ctx, caller, id), deliveryId)
}
