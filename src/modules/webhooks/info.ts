// The delivery facts of GET /webhooks/info and the event types generated for receivers: what a receiver needs
// to know before its first delivery, read from the constants the sender itself uses.
import { SIGNATURE_HEADERS, EVENT_HEADER, USER_AGENT } from './delivery'
import {
  AUTO_DISABLE_AFTER_MS,
  AUTO_DISABLE_FAILURES,
  BATCH_MAX_EVENTS,
  JITTER,
  maxAttemptsFor,
  RETRY_AFTER_CAP_MS,
  RETRY_DELAYS_MS,
  TIMEOUT_MS,
} from './schedule'
import { KNOWN_EVENTS } from './service'
import type { WebhooksCtx } from './state'
import { eventTypes } from './type-gen'

export function webhookInfo(ctx: WebhooksCtx) {
  const seconds = (list: readonly number[]) => list.map((ms) => ms / 1000)
  return {
    egressIps: ctx.config.webhookEgressIps,
    egressIpsConfigured: ctx.config.webhookEgressIps.length > 0,
    retrySchedule: { live: seconds(RETRY_DELAYS_MS.live), test: seconds(RETRY_DELAYS_MS.test) },
    maxAttempts: { live: maxAttemptsFor('live'), test: maxAttemptsFor('test') },
    jitter: JITTER,
    retryAfterCapSeconds: RETRY_AFTER_CAP_MS / 1000,
    timeoutSeconds: TIMEOUT_MS / 1000,
    signatureHeaders: [...SIGNATURE_HEADERS],
    eventHeader: EVENT_HEADER,
    userAgent: USER_AGENT,
    mtlsConfigured: ctx.config.webhookClientCert !== null,
    maxBatchSize: BATCH_MAX_EVENTS,
    autoDisable: { consecutiveFailures: AUTO_DISABLE_FAILURES, withoutSuccessSeconds: AUTO_DISABLE_AFTER_MS / 1000 },
    events: [...KNOWN_EVENTS],
  }
}

export function webhookTypes(lang: 'ts' | 'go') {
  return { lang, source: eventTypes(lang) }
}
