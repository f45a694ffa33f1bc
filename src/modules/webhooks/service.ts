// Webhook endpoints, shared by HTTP and jobs: validation on save (URL safety, event names, filters, template,
// headers, mTLS), the endpoint view of spec 2.5, and secret rotation. Deliveries live in deliveries.ts and the
// facts of GET /webhooks/info in info.ts.
import { iso } from '../../platform/clock'
import { type Caller, listedMode, type ModeFilter } from '../identity'
import { Issues, pointerToPath } from '../../platform/errors'
import { endpointNotFound, testKeyCreatesLiveEndpoint } from './errors'
import { checkUrl } from '../../net/egress'
import { newId } from '../../platform/random'
import { SIGNATURE_HEADERS, EVENT_HEADER } from './delivery'
import { validateEventPatterns, validateFilters } from './filters'
import { EVENT_CATALOGUE, URL_MAX_LENGTH, type CreateWebhookInput, type UpdateWebhookInput } from './model'
import type { EndpointKind, EndpointRow, NewEndpoint } from './port'
import { generateSecret, valueHint } from './signing'
import { egressPolicy, type WebhooksCtx } from './state'
import { validateTemplate } from './template'
import { HOUR_MS } from '../../platform/time'

export const KNOWN_EVENTS: readonly string[] = EVENT_CATALOGUE.map((e) => e.type)
export const ROTATION_GRACE_MS = 24 * HOUR_MS

/** Header names the sender sets itself or that belong to the connection, refused as custom headers. */
const RESERVED_HEADERS = new Set([
  ...SIGNATURE_HEADERS,
  EVENT_HEADER,
  'content-type',
  'content-length',
  'user-agent',
  'host',
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'trailers',
  'transfer-encoding',
  'upgrade',
  'expect',
])
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

export function toEndpoint(row: EndpointRow, now: number) {
  const graceLeft = row.previousSecret && row.previousSecretExpiresAt != null && row.previousSecretExpiresAt > now
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    events: row.events,
    format: row.format,
    mode: row.mode,
    isActive: row.isActive,
    failureCount: row.failureCount,
    disabledReason: row.disabledReason,
    customHeaderNames: row.customHeaders.map((h) => ({ name: h.name, hint: valueHint(h.value) })),
    filters: row.filters as never,
    transform: row.transform,
    batchEnabled: row.batchEnabled,
    batchWindowSeconds: row.batchWindowSeconds,
    maxConcurrent: row.maxConcurrent,
    mtlsEnabled: row.mtlsEnabled,
    previousSecretExpiresAt: graceLeft ? iso(row.previousSecretExpiresAt!) : null,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  }
}

type Settings = Partial<CreateWebhookInput>

/** Checks what was sent and answers the columns it sets. Every problem is named, with its path. */
async function validated(ctx: WebhooksCtx, input: Settings, current: EndpointRow | null): Promise<Partial<NewEndpoint>> {
  const issues = new Issues()
  const out: Partial<NewEndpoint> = {}
  if (input.url !== undefined) {
    if (typeof input.url !== 'string' || !input.url || input.url.length > URL_MAX_LENGTH)
      issues.add('url', `must be an absolute URL of at most ${URL_MAX_LENGTH} characters`)
    else {
      const checked = await checkUrl(input.url, egressPolicy(ctx), ctx.state.resolver ?? undefined)
      if (!checked.ok) issues.add('url', checked.reason)
      else out.url = input.url
    }
  }
  if (input.events !== undefined) {
    for (const i of validateEventPatterns(input.events, KNOWN_EVENTS, '/events')) issues.add(pointerToPath(i.path), i.message)
    out.events = [...new Set(input.events as string[])]
  }
  if (input.filters !== undefined) {
    const result = validateFilters(input.filters)
    if (!result.ok) for (const i of result.issues) issues.add(pointerToPath(i.path), i.message)
    else {
      out.filters = result.value
      if (result.value?.events)
        for (const i of validateEventPatterns(result.value.events, KNOWN_EVENTS, '/filters/events')) issues.add(pointerToPath(i.path), i.message)
    }
  }
  const format = input.format ?? current?.format ?? 'standard'
  if (input.format !== undefined) out.format = input.format
  if (input.transform !== undefined) {
    if (input.transform !== null) for (const i of validateTemplate(input.transform.template)) issues.add(pointerToPath(i.path), i.message)
    out.transform = input.transform
  }
  const transform = input.transform !== undefined ? input.transform : (current?.transform ?? null)
  if (transform && format !== 'standard') issues.add('transform', `a template applies to the standard format only; ${format} endpoints get a ${format} message`)
  if (input.customHeaders !== undefined) {
    const seen = new Set<string>()
    input.customHeaders.forEach((h, i) => {
      const lower = h.name.toLowerCase()
      if (!TOKEN.test(h.name)) issues.add(`customHeaders.${i}.name`, "must be an HTTP header name (letters, digits and !#$%&'*+.^_`|~-)")
      else if (RESERVED_HEADERS.has(lower))
        issues.add(`customHeaders.${i}.name`, `"${h.name}" is set by the sender or belongs to the connection; it cannot be a custom header`)
      else if (seen.has(lower)) issues.add(`customHeaders.${i}.name`, `"${h.name}" is given twice`)
      if (/[\r\n\0]/.test(h.value)) issues.add(`customHeaders.${i}.value`, 'must not contain line breaks or NUL')
      seen.add(lower)
    })
    out.customHeaders = input.customHeaders
  }
  if (input.mtlsEnabled === true && !ctx.config.webhookClientCert) {
    issues.add('mtlsEnabled', 'no client certificate is configured on this server (LNK_WEBHOOK_CLIENT_CERT and LNK_WEBHOOK_CLIENT_KEY)')
  }
  issues.throwIfAny()
  if (input.name !== undefined) out.name = input.name
  if (input.batchEnabled !== undefined) out.batchEnabled = input.batchEnabled
  if (input.batchWindowSeconds !== undefined) out.batchWindowSeconds = input.batchWindowSeconds
  if (input.maxConcurrent !== undefined) out.maxConcurrent = input.maxConcurrent
  if (input.mtlsEnabled !== undefined) out.mtlsEnabled = input.mtlsEnabled
  return out
}

/**
 * An endpoint of the caller's workspace; a test key sees only test endpoints (others do not exist for it),
 * while a live key may name a test endpoint by id.
 */
export async function findOwn(ctx: WebhooksCtx, caller: Caller, id: string): Promise<EndpointRow> {
  const row = await ctx.webhooks.findEndpoint(caller.workspace.id, id)
  if (!row || row.kind !== 'endpoint' || (caller.mode === 'test' && row.mode !== 'test')) throw endpointNotFound(id)
  return row
}

/** The workspace's endpoints of the mode asked for (default: the caller's own; a test key lists test ones only). */
export async function listEndpoints(ctx: WebhooksCtx, caller: Caller, mode?: ModeFilter) {
  const now = ctx.clock.now()
  return (await ctx.webhooks.listEndpoints(caller.workspace.id, 'endpoint', listedMode(caller, mode, 'webhook endpoints'))).map((r) => toEndpoint(r, now))
}

export async function getEndpoint(ctx: WebhooksCtx, caller: Caller, id: string) {
  return toEndpoint(await findOwn(ctx, caller, id), ctx.clock.now())
}

/** A new endpoint or REST-hook subscription with the defaults of every setting it was not given. */
export function newEndpoint(
  f: Pick<NewEndpoint, 'id' | 'workspaceId' | 'url' | 'events' | 'mode' | 'secret'> & { kind: EndpointKind; now: number },
): NewEndpoint {
  const { now, ...given } = f
  return {
    ...given,
    format: 'standard',
    isActive: true,
    failureCount: 0,
    customHeaders: [],
    batchEnabled: false,
    batchWindowSeconds: 10,
    maxConcurrent: 5,
    mtlsEnabled: false,
    createdAt: now,
    updatedAt: now,
  }
}

export async function createEndpoint(ctx: WebhooksCtx, caller: Caller, input: CreateWebhookInput) {
  const mode = input.mode ?? caller.mode
  if (caller.mode === 'test' && mode !== 'test') throw testKeyCreatesLiveEndpoint()
  // url and events are required by the body's schema, so once valid they are set.
  const { url, events, ...columns } = await validated(ctx, input, null)
  const now = ctx.clock.now()
  const secret = generateSecret()
  const isActive = input.isActive ?? true
  const row = await ctx.webhooks.insertEndpoint({
    ...newEndpoint({ id: newId('whe'), kind: 'endpoint', workspaceId: caller.workspace.id, url: url!, events: events!, mode, secret, now }),
    isActive,
    ...columns,
  })
  ctx.state.endpointChanged()
  return { ...toEndpoint(row, now), secret }
}

export async function updateEndpoint(ctx: WebhooksCtx, caller: Caller, id: string, input: UpdateWebhookInput) {
  const current = await findOwn(ctx, caller, id)
  const patch = await validated(ctx, input, current)
  const now = ctx.clock.now()
  patch.updatedAt = now
  if (input.isActive !== undefined) {
    patch.isActive = input.isActive
    // Re-enabling starts afresh: the reason it was disabled and the failure run no longer apply.
    if (input.isActive && !current.isActive) Object.assign(patch, { disabledReason: null, failureCount: 0, failingSince: null })
  }
  const row = await ctx.webhooks.updateEndpoint(current.id, patch)
  if (!row) throw endpointNotFound(id)
  ctx.state.endpointChanged()
  return toEndpoint(row, now)
}

export async function deleteEndpoint(ctx: WebhooksCtx, caller: Caller, id: string) {
  const current = await findOwn(ctx, caller, id)
  if (!(await ctx.webhooks.deleteEndpoint(current.id))) throw endpointNotFound(id)
  ctx.state.endpointChanged()
  return { id: current.id, deleted: true as const }
}

export async function rotateSecret(ctx: WebhooksCtx, caller: Caller, id: string, grace = true) {
  const current = await findOwn(ctx, caller, id)
  const now = ctx.clock.now()
  const secret = generateSecret()
  const row = await ctx.webhooks.rotateSecret(current.id, secret, grace ? now + ROTATION_GRACE_MS : null, now)
  if (!row) throw endpointNotFound(id)
  ctx.state.endpointChanged()
  return { ...toEndpoint(row, now), secret }
}
