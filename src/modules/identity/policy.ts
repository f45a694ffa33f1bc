// The rules a key is held to on every call, as pure functions of the key and the facts of the call (time,
// client address, calls counted, the rate limiter's decision), in the contract's order. Authentication
// (auth.ts) gathers the facts and applies these; nothing here reads state.
import { startOfNextUtcMonth } from '../../platform/clock'
import type { AppError } from '../../platform/errors'
import type { ApiKeyRow } from './port'
import { ipAllowed } from '../../platform/ip'
import type { RateDecision } from './rate-limit'
import { withinSchedule } from './schedule'
import { ipNotAllowed, keyExpired, keyPaused, keyRevoked, monthlyCapExceeded, outsideSchedule, rateLimited } from './errors'

/** Requests a minute a key may make unless its rateLimitOverride says otherwise (contract section 2). */
export const DEFAULT_RATE_LIMIT = 600

export const rateLimitOf = (key: Pick<ApiKeyRow, 'rateLimitOverride'>) => key.rateLimitOverride ?? DEFAULT_RATE_LIMIT

/** Revoked, expired, paused, outside its allowed addresses or its schedule: the refusal, or undefined. */
export function accessRefusal(key: ApiKeyRow, now: number, ip: string | null): AppError | undefined {
  if (key.revokedAt != null) return keyRevoked()
  if (key.expiresAt != null && key.expiresAt <= now) return keyExpired()
  if (key.pausedAt != null) return keyPaused(key.pausedReason)
  if (!ipAllowed(ip, key.allowedIps)) return ipNotAllowed(ip)
  if (key.schedule && !withinSchedule(key.schedule, now)) return outsideSchedule(key.schedule)
  return undefined
}

/** The monthly cap is spent (the call was not counted): the refusal, with Retry-After to the next UTC month. */
export function monthlyCapRefusal(key: ApiKeyRow, now: number): AppError {
  const retryAfter = Math.max(1, Math.ceil((startOfNextUtcMonth(now) - now) / 1000))
  return monthlyCapExceeded(key.monthlyCallCap, retryAfter)
}

/** Over the rate limit: the refusal, or undefined. */
export function rateRefusal(rate: RateDecision): AppError | undefined {
  if (rate.allowed) return undefined
  return rateLimited(rate.limit, rate.retryAfter)
}

// http/auth.ts imports it from here; it can import the named refusals of errors.ts instead.
