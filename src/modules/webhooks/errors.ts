// Every way the webhooks area refuses, by name. Codes, messages and details are published: change them only
// as the contract allows (messages may change, codes and details not).
import { AppError, notFound } from '../../platform/errors'

export const endpointNotFound = (id: string) => notFound(`Webhook endpoint ${id}`)

export const deliveryNotFound = (id: string) => notFound(`Delivery ${id}`)

/** The endpoint was deleted between the ping's start and its record. */
export const endpointGoneDuringPing = (id: string) => new AppError('not_found', `Webhook endpoint ${id} was deleted while the ping was being sent`)

export const testKeyCreatesLiveEndpoint = () => new AppError('forbidden', 'A test key can only create test endpoints')

/** Replay asked of an endpoint that is paused, or disabled (then `disabledReason` says why). */
export const endpointPaused = (endpoint: { id: string; disabledReason: string | null }) =>
  new AppError(
    'endpoint_paused',
    `Webhook endpoint ${endpoint.id} is ${endpoint.disabledReason ? `disabled (${endpoint.disabledReason})` : 'paused'}; enable it (PATCH isActive: true) before replaying`,
    {
      endpointId: endpoint.id,
    },
  )

export const pingNotReplayable = () => new AppError('conflict', 'A test ping is not replayed; send a new one with POST /webhooks/{id}/test')

export const batchStillOpen = () => new AppError('conflict', 'This batch is still collecting events; it is sent when its window ends')

/** Only the newest copy of a delivery is replayed. */
export const alreadyReplayed = (deliveryId: string) => new AppError('conflict', `Delivery ${deliveryId} was already replayed; replay its newest copy instead`)
