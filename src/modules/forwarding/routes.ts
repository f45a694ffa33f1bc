// /v1/webhooks/cli/…: forwarding sessions and their long poll. Thin routes over the service.
import { Elysia, t } from 'elysia'
import { Envelope, ErrorEnvelope, ok } from '../../http/envelope'
import { holdOpen } from '../../http/request-context'
import type { HttpKit } from '../identity'
import { CreatedSession, CreateSessionBody, ForwardedEvent, OpenSessionView, PollQuery } from './model'
import { endSession, listSessions, openSession, poll, type ForwardingCtx } from './service'

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope, 410: ErrorEnvelope }
/** Beyond the longest wait, so Bun's idle timeout (10 s by default) never cuts a held poll. */
const HELD_POLL_GRACE_SECONDS = 10

export function forwardingRoutes(ctx: ForwardingCtx, http: HttpKit) {
  return new Elysia({ name: 'lnk.forwarding', seed: http.instanceId, prefix: '/webhooks/cli', tags: ['Webhooks'] })
    .use(http.auth)
    .post(
      '/sessions',
      async ({ caller, body, set }) => {
        set.status = 201
        return ok(await openSession(ctx, caller, body ?? {}))
      },
      {
        permission: 'webhooks:write',
        body: t.Optional(CreateSessionBody),
        response: { 201: Envelope(CreatedSession), ...errors },
        detail: {
          summary: 'Open a forwarding session',
          description:
            "For `lnk listen`: events of the key's workspace and mode matching `events` are queued for the session until a poll takes them. The answer " +
            'carries the signing secret (the same for every session of this key until the key rotates). The session ends 60 s after its last ' +
            'poll.',
        },
      },
    )
    .get('/sessions', async ({ caller }) => ok(await listSessions(ctx, caller)), {
      permission: 'webhooks:read',
      response: { 200: Envelope(t.Array(OpenSessionView)), ...errors },
      detail: { summary: 'List open forwarding sessions', description: "The calling key's open sessions, never their secret." },
    })
    .delete('/sessions/:id', async ({ caller, params }) => ok(await endSession(ctx, caller, params.id)), {
      permission: 'webhooks:write',
      params: t.Object({ id: t.String() }),
      response: { 200: Envelope(t.Object({ id: t.String(), deleted: t.Literal(true) })), ...errors },
      detail: { summary: 'End a forwarding session', description: 'Its queued events are dropped; a poll waiting on it answers an empty list.' },
    })
    .get(
      '/events',
      async ({ caller, query, request }) => {
        if (query.wait > 0) holdOpen(request, query.wait + HELD_POLL_GRACE_SECONDS)
        return ok(await poll(ctx, caller, query))
      },
      {
        permission: 'webhooks:read',
        query: PollQuery,
        response: { 200: Envelope(t.Array(ForwardedEvent)), ...errors },
        detail: {
          summary: 'Take the events waiting for a session',
          description:
            'Answers at once when events wait (oldest first, at most limit), else waits up to wait seconds for the first one and answers an empty list. ' +
            'Events handed over are removed: a second poll never repeats them. Each poll keeps the session open for 60 s more; a newer poll of ' +
            'the same session releases an older one. Unknown session 404; ended 410 session_expired.',
        },
      },
    )
}
