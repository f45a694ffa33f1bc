// When the next attempt of a failed delivery happens (contract section 5), and the other delivery facts
// GET /webhooks/info publishes.
import { random } from '../../platform/random'

const S = 1000
const MIN = 60 * S
const H = 60 * MIN

/** Delay after the n-th failed attempt (index n-1). One more attempt than delays: the first is immediate. */
export const RETRY_DELAYS_MS = {
  live: [5 * S, 5 * MIN, 30 * MIN, 2 * H, 5 * H, 10 * H, 14 * H, 20 * H, 24 * H],
  test: [5 * S, 5 * MIN, 30 * MIN],
} as const

export const maxAttemptsFor = (mode: 'live' | 'test') => RETRY_DELAYS_MS[mode].length + 1

export const JITTER = 0.2
export const TIMEOUT_MS = 15_000
/** A receiver's Retry-After is honoured up to this; beyond it the schedule's own delay is used. */
export const RETRY_AFTER_CAP_MS = 24 * H
export const BATCH_MAX_EVENTS = 100
/** Auto-disable: at least this many consecutive failed attempts… */
export const AUTO_DISABLE_FAILURES = 20
/** …the first of which is at least this old (no success in between). */
export const AUTO_DISABLE_AFTER_MS = 5 * 24 * H
/** How long an attempt waits in memory for a free slot under the concurrency caps… */
export const SLOT_WAIT_MS = 2000
/** …before it is put off by this much (a new job; the worker's slot is freed for other work). */
export const DEFER_MS = 1000

/**
 * Delay after `failedAttempts` failures with ±20 % jitter, or null when none is left. `rand` is injectable
 * so the bounds can be tested.
 */
export function retryDelay(mode: 'live' | 'test', failedAttempts: number, rand: () => number = random): number | null {
  const base = RETRY_DELAYS_MS[mode][failedAttempts - 1]
  if (base === undefined) return null
  return Math.round(base * (1 - JITTER + 2 * JITTER * rand()))
}

/**
 * Retry-After in milliseconds from now: delta seconds or an HTTP date. Null when absent or unreadable; a
 * date in the past counts as "now" (0).
 */
export function parseRetryAfter(value: string | undefined | null, now: number): number | null {
  if (value == null) return null
  const v = value.trim()
  if (/^\d+$/.test(v)) return Number(v) * 1000
  const at = Date.parse(v)
  if (!Number.isFinite(at) || !/[a-z]/i.test(v)) return null
  return Math.max(0, at - now)
}

/**
 * When the next attempt happens: a receiver's Retry-After wins over the schedule (capped at 24 h; a
 * shorter one than the schedule's is honoured too, down to 1 s) but never adds attempts.
 */
export function nextAttemptAt(
  mode: 'live' | 'test',
  failedAttempts: number,
  now: number,
  retryAfterMs: number | null,
  rand: () => number = random,
): number | null {
  const delay = retryDelay(mode, failedAttempts, rand)
  if (delay === null) return null
  if (retryAfterMs !== null && retryAfterMs <= RETRY_AFTER_CAP_MS) return now + Math.max(1000, retryAfterMs)
  return now + delay
}
