// TypeBox schemas of forwarding sessions (spec 4.3, contract section 6): the session, its listing, and the
// events a poll hands over.
import { t } from 'elysia'
import { EventPattern } from '../webhooks/model'

export const POLL_WAIT_DEFAULT = 5
export const POLL_WAIT_MAX = 25
export const POLL_LIMIT_MAX = 100
/** A session expires this long after its last poll. */
export const IDLE_TIMEOUT_SECONDS = 60
/** Events queued per session at most; past it they are counted in `dropped`. */
export const QUEUE_CAP = 500

const Mode = t.Union([t.Literal('live'), t.Literal('test')], { description: 'The mode of the key that opened it: it receives events of that mode only' })

export const CreateSessionBody = t.Object(
  {
    events: t.Optional(t.Array(EventPattern, { minItems: 1, maxItems: 100, description: 'Event types or patterns (*, link.*); default ["*"]' })),
    deviceName: t.Optional(t.String({ minLength: 1, maxLength: 100, description: 'A name for the machine listening, shown in the session list' })),
  },
  { additionalProperties: false },
)

const SessionFields = {
  id: t.String({ description: 'cls_…' }),
  mode: Mode,
  events: t.Array(t.String()),
  deviceName: t.Union([t.String(), t.Null()]),
  createdAt: t.String({ format: 'date-time' }),
  expiresAt: t.String({ format: 'date-time', description: `${IDLE_TIMEOUT_SECONDS} s after the last poll` }),
}

export const CreatedSession = t.Object({
  ...SessionFields,
  secret: t.String({ description: 'whsec_…: signs every event handed over. One per API key: the same for every session of the key until the key is rotated' }),
  pollWaitSeconds: t.Integer({ description: 'How long a poll waits for the first event by default' }),
  idleTimeoutSeconds: t.Integer({ description: 'The session ends this long after its last poll' }),
})

export const OpenSessionView = t.Object({
  ...SessionFields,
  lastPollAt: t.Union([t.String({ format: 'date-time' }), t.Null()]),
  queued: t.Integer({ minimum: 0, description: 'Events waiting for the next poll' }),
  dropped: t.Integer({ minimum: 0, description: `Events that did not fit the queue (${QUEUE_CAP} at most)` }),
})

export const ForwardedEvent = t.Object({
  id: t.String({ description: 'The event id (evt_…), also its webhook-id' }),
  type: t.String(),
  body: t.String({ description: 'The event envelope exactly as signed: forward these bytes unchanged' }),
  headers: t.Record(t.String(), t.String(), {
    description:
      'content-type, user-agent and both signatures of the contract (webhook-id, webhook-timestamp, webhook-signature, x-service-signature), made with ' +
      'the session secret at hand-over',
  }),
})

export const PollQuery = t.Object({
  session: t.String({ minLength: 1, maxLength: 64, description: 'The session (cls_…)' }),
  wait: t.Integer({
    minimum: 0,
    maximum: POLL_WAIT_MAX,
    default: POLL_WAIT_DEFAULT,
    description: `Seconds to wait for the first event when none is queued (max ${POLL_WAIT_MAX})`,
  }),
  limit: t.Integer({ minimum: 1, maximum: POLL_LIMIT_MAX, default: POLL_LIMIT_MAX, description: `Events at most (max ${POLL_LIMIT_MAX})` }),
})
