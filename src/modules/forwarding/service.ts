// Forwarding sessions (spec 4.3 rules 6 and 7): a developer's `lnk listen` opens a session and polls it;
// the fan-out queues matching events per open session; a poll takes what waits (deleting it, so nothing is
// handed over twice), signs it with the key's session secret at hand-over, or waits for the first event.
// Every poll is the session's heartbeat: it ends IDLE_TIMEOUT_SECONDS after the last one.
import type { Deps } from '../../context'
import { iso, isoOrNull } from '../../platform/clock'
import { invalid, pointerToPath } from '../../platform/errors'
import { newId } from '../../platform/random'
import type { Caller } from '../identity'
import { validateEventPatterns, generateSecret, signatureHeaders } from '../webhooks'
import { EVENT_CATALOGUE } from '../webhooks/model'
import { sessionExpired, sessionNotFound } from './errors'
import { IDLE_TIMEOUT_SECONDS, POLL_WAIT_DEFAULT } from './model'
import type { ForwardingRepo, SessionRow } from './port'
import type { Waiters } from './waiters'

export interface ForwardingCtx extends Deps {
  sessions: ForwardingRepo
  waiters: Waiters
  /** Sessions changed in this process: cached lists of open sessions are stale. */
  changed(): void
}

const KNOWN = EVENT_CATALOGUE.map((e) => e.type)
const IDLE_MS = IDLE_TIMEOUT_SECONDS * 1000
const USER_AGENT = 'lnk-forwarding/1'

const sessionFields = (row: SessionRow) => ({
  id: row.id,
  mode: row.mode,
  events: row.events,
  deviceName: row.deviceName,
  createdAt: iso(row.createdAt),
  expiresAt: iso(row.expiresAt),
})

const secretOf = (ctx: ForwardingCtx, caller: Caller) => ctx.sessions.secretFor(caller.key.id, caller.key.keyHash, generateSecret, ctx.clock.now())

export async function openSession(ctx: ForwardingCtx, caller: Caller, input: { events?: unknown[]; deviceName?: string }) {
  const issues = validateEventPatterns(input.events ?? ['*'], KNOWN)
  if (issues.length)
    throw invalid(
      'body',
      issues.map((i) => ({ path: pointerToPath(i.path), message: i.message })),
    )
  const events = (input.events ?? ['*']) as string[]
  const now = ctx.clock.now()
  const row: SessionRow = {
    id: newId('cls'),
    workspaceId: caller.workspace.id,
    keyId: caller.key.id,
    mode: caller.mode,
    events,
    deviceName: input.deviceName ?? null,
    dropped: 0,
    createdAt: now,
    lastPollAt: null,
    expiresAt: now + IDLE_MS,
  }
  const secret = await secretOf(ctx, caller)
  await ctx.sessions.insert(row)
  ctx.changed()
  return { ...sessionFields(row), secret, pollWaitSeconds: POLL_WAIT_DEFAULT, idleTimeoutSeconds: IDLE_TIMEOUT_SECONDS }
}

export async function listSessions(ctx: ForwardingCtx, caller: Caller) {
  return (await ctx.sessions.listOpen(caller.key.id, ctx.clock.now())).map((r) => ({
    ...sessionFields(r),
    lastPollAt: isoOrNull(r.lastPollAt),
    queued: r.queued,
    dropped: r.dropped,
  }))
}

export async function endSession(ctx: ForwardingCtx, caller: Caller, id: string) {
  if (!(await ctx.sessions.delete(id, caller.key.id))) throw sessionNotFound(id)
  ctx.waiters.release(id)
  ctx.changed()
  return { id, deleted: true as const }
}

/** A session of the calling key that is still open. */
async function openOwn(ctx: ForwardingCtx, caller: Caller, id: string): Promise<SessionRow> {
  const row = await ctx.sessions.find(id)
  if (!row || row.keyId !== caller.key.id) throw sessionNotFound(id)
  if (row.expiresAt <= ctx.clock.now()) throw sessionExpired(id)
  return row
}

export async function poll(ctx: ForwardingCtx, caller: Caller, q: { session: string; wait: number; limit: number }) {
  const row = await openOwn(ctx, caller, q.session)
  const now = ctx.clock.now()
  if (!(await ctx.sessions.touch(row.id, now, now + IDLE_MS))) throw sessionNotFound(q.session)
  // Held before the queue is read: an event queued (and its wake-up sent) while the read is under way then
  // wakes this poll instead of nobody. Holding releases a poll still waiting from before.
  const deadline = performance.now() + q.wait * 1000
  const hold = q.wait > 0 ? ctx.waiters.wait(row.id, q.wait * 1000) : null
  let taken = await ctx.sessions.take(row.id, q.limit)
  if (taken.length || !hold) {
    // Answering at once: this poll's hold ends, as does one still waiting from before.
    ctx.waiters.release(row.id)
  } else {
    // A wake-up that finds nothing (its dispatch rolled back, or a reset woke every poll) holds the poll
    // again for what is left of its wait, unless a newer poll of the session is held by now.
    for (let reason = await hold; reason === 'queued'; ) {
      taken = await ctx.sessions.take(row.id, q.limit)
      const left = deadline - performance.now()
      if (taken.length || left <= 0 || ctx.waiters.holds(row.id)) break
      reason = await ctx.waiters.wait(row.id, left)
    }
  }
  if (!taken.length) return []
  const secret = await secretOf(ctx, caller)
  const timestamp = Math.floor(ctx.clock.now() / 1000)
  return taken.map((e) => ({
    id: e.eventId,
    type: e.type,
    body: e.body,
    headers: {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      ...signatureHeaders({ id: e.eventId, timestamp, body: e.body, secrets: [secret] }),
    },
  }))
}
