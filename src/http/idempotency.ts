// Idempotency-Key on POST (contract section 2): the same key and body within 24 h replays the stored
// answer with `Idempotent-Replayed: true`; the same key with another body, or while the first request is
// still running, is 409 conflict. Only successful answers are stored: a failed request changed nothing,
// so sending it again is safe.
import { canonicalJson } from '../platform/canonical-json'
import { DAY_MS } from '../platform/time'
import type { Clock } from '../platform/clock'
import type { Insertable } from '../db/rows'
import { newId, sha256Hex } from '../platform/random'
import { AppError } from '../platform/errors'

export const IDEMPOTENCY_TTL_MS = DAY_MS
const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/

// What this layer asks of storage, in plain types (the platform module's repo-idempotency.ts answers it on
// either engine).

/** A POST's stored answer under its Idempotency-Key, per API key. */
export interface IdempotencyRecord {
  id: string
  apiKeyId: string
  key: string
  method: string
  path: string
  requestHash: string
  /** Null while the first request is still being processed. */
  responseStatus: number | null
  responseBody: string | null
  createdAt: number
  expiresAt: number
}

export type NewIdempotencyRecord = Insertable<IdempotencyRecord>

export interface IdempotencyRepo {
  find(apiKeyId: string, key: string): Promise<IdempotencyRecord | undefined>
  /** Reserves the key; false when another request holds it already. Expired holders are replaced. */
  reserve(record: NewIdempotencyRecord, now: number): Promise<boolean>
  /** Stores the answer of the request that holds the record. */
  complete(id: string, status: number, body: string): Promise<void>
  /** Gives the key up (the request failed), so the next request with it runs afresh. */
  release(id: string): Promise<void>
  /** Deletes every record past its expiry; answers how many. */
  pruneExpired(now: number): Promise<number>
}

/** Whose answer is stored: the caller's key, and the workspace it acts in. */
export interface IdempotentCaller {
  key: { id: string }
  workspace: { id: string }
}

/** What the idempotent macro reads: the stored answers and the clock. */
export interface IdempotencyDeps {
  clock: Clock
  idempotency: IdempotencyRepo
}

/** How a request under an Idempotency-Key begins: the stored answer to replay, or the reservation it holds. */
type Begun = { replay: Response } | { reserved: string } | null

/**
 * Checks the key and the stored answer, and reserves the key for this request; null without a key. A replay
 * is the stored answer as it was sent, with `Idempotent-Replayed: true`.
 */
async function begin(deps: IdempotencyDeps, caller: IdempotentCaller, request: Request, body: unknown): Promise<Begun> {
  const key = request.headers.get('idempotency-key')
  if (key === null) return null
  if (!KEY_FORMAT.test(key)) throw new AppError('invalid_request', 'Idempotency-Key must be 1-255 visible ASCII characters')
  const path = new URL(request.url).pathname
  const requestHash = sha256Hex(`${request.method} ${path} ${caller.workspace.id} ${canonicalJson(body ?? {})}`)
  const now = deps.clock.now()

  const existing = await deps.idempotency.find(caller.key.id, key)
  if (existing && existing.expiresAt > now) {
    if (existing.requestHash !== requestHash) {
      throw new AppError('conflict', 'This Idempotency-Key was already used with a different request; use a new key for a new request')
    }
    if (existing.responseStatus === null || existing.responseBody === null) {
      throw new AppError('conflict', 'A request with this Idempotency-Key is still being processed; retry shortly')
    }
    return {
      replay: new Response(existing.responseBody, {
        status: existing.responseStatus,
        headers: { 'content-type': 'application/json', 'idempotent-replayed': 'true' },
      }),
    }
  }

  const id = newId('idem')
  const reserved = await deps.idempotency.reserve(
    { id, apiKeyId: caller.key.id, key, method: request.method, path, requestHash, createdAt: now, expiresAt: now + IDEMPOTENCY_TTL_MS },
    now,
  )
  if (!reserved) throw new AppError('conflict', 'A request with this Idempotency-Key is still being processed; retry shortly')
  return { reserved: id }
}

const reservations = new WeakMap<Request, { id: string; deps: IdempotencyDeps }>()

/**
 * Gives up the key a failed request reserved, so the next request with it runs afresh. The app's error
 * handler calls it before it answers (a route's own error hook would not run: the app's answers first), so a
 * client retrying at once finds the key free.
 */
export async function releaseIdempotent(request: Request): Promise<void> {
  const held = reservations.get(request)
  if (held === undefined) return
  reservations.delete(request)
  await held.deps.idempotency.release(held.id)
}

/**
 * `idempotent: true` on a POST route (beside its `permission`): the route states it once, and the macro
 * replays, refuses or stores around its handler. It runs once the body is validated (the stored request
 * hash covers it) and reads the caller the permission macro found, through `callerOf`. Only a successful
 * answer is stored; a failure gives the key up (releaseIdempotent, from the app's error handler). The operation is marked `x-idempotent` for the document,
 * which then lists the Idempotency-Key header.
 */
export function idempotentMacro(deps: IdempotencyDeps, callerOf: (request: Request) => IdempotentCaller | undefined) {
  return (on: boolean) =>
    on
      ? {
          detail: { 'x-idempotent': true } as Record<string, unknown>,
          async beforeHandle({ request, body }: { request: Request; body: unknown }) {
            const caller = callerOf(request)
            if (!caller) return
            const begun = await begin(deps, caller, request, body)
            if (begun === null) return
            if ('replay' in begun) return begun.replay
            reservations.set(request, { id: begun.reserved, deps })
          },
          async afterHandle({ request, response, set }: { request: Request; response: unknown; set: { status?: number | string } }) {
            const held = reservations.get(request)
            if (held === undefined) return
            reservations.delete(request)
            await deps.idempotency.complete(held.id, typeof set.status === 'number' ? set.status : 200, JSON.stringify(response))
          },
        }
      : {}
}
