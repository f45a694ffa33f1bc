// Every way a key is refused (on a call, by the rules of policy.ts) and every way managing keys is refused,
// by name. Codes, messages, details and headers are published: change them only as the contract allows
// (messages may change, codes and details not).
import { iso } from '../../platform/clock'
import { AppError, invalid, notFound, type ValidationIssue } from '../../platform/errors'
import type { Schedule } from '../identity/model'

// --- On a call -------------------------------------------------------------------------------------------

/** 401, with the challenge RFC 9110 asks for. */
export const unauthorized = (message: string) => new AppError('unauthorized', message, undefined, { 'WWW-Authenticate': 'Bearer realm="lnk"' })

export const missingCredential = () => unauthorized('Missing credential: send Authorization: Bearer <API key>')

export const notBearer = () => unauthorized('Authorization must use the Bearer scheme: Authorization: Bearer <API key>')

export const malformedKey = () => unauthorized('Invalid API key: keys look like lnk_live_… or lnk_test_… followed by 32 letters and digits')

/** No such key, or its user is gone. */
export const unknownKey = () => unauthorized('Invalid API key')

export const keyRevoked = () => unauthorized('This API key was revoked; create a new one')

export const keyExpired = () => unauthorized('This API key has expired; create a new one')

export const keyPaused = (reason: string | null) => new AppError('key_paused', `This API key is paused${reason ? ` (${reason})` : ''}; resume it to use it again`)

export const ipNotAllowed = (ip: string | null) =>
  new AppError('ip_not_allowed', `This API key may not be used from ${ip ?? 'an unknown address'}; call from an address in its allowedIps or change the list`, { ip })

const hhmm = (m: number) => `${String(Math.floor(m / 60) % 24).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`

export const outsideSchedule = (s: Schedule) =>
  new AppError('outside_schedule', `This API key works only ${hhmm(s.startMinute)}-${hhmm(s.endMinute)} (${s.timezone}) on days ${s.days.join(',')} (0 = Sunday)`, { schedule: s })

/**
 * The user of the key is not a member of the workspace asked for (`ownWorkspace`: the key's own one, which
 * it has since left).
 */
export const notAMember = (workspaceRef: string, ownWorkspace: boolean) =>
  new AppError('forbidden', ownWorkspace ? "This key's user is no longer a member of its workspace" : `You are not a member of workspace "${workspaceRef.slice(0, 64)}"`)

/** `retryAfter`: seconds until the month turns (UTC). */
export const monthlyCapExceeded = (monthlyCallCap: number | null, retryAfter: number) =>
  new AppError('monthly_cap_exceeded', `This key has used its ${monthlyCallCap} calls for this month; it works again when the month turns (UTC)`, { monthlyCallCap }, { 'Retry-After': String(retryAfter) })

export const rateLimited = (limit: number, retryAfter: number) =>
  new AppError('rate_limited', `Too many requests: this key may make ${limit} a minute; retry in ${retryAfter} s`, { limit }, { 'Retry-After': String(retryAfter) })

export const permissionMissing = (required: string) => new AppError('forbidden', `This key lacks the ${required} permission`, { required })

// --- Managing keys ---------------------------------------------------------------------------------------

export const apiKeyNotFound = (id: string) => notFound(`API key ${id}`)

export const invalidKeySettings = (issues: ValidationIssue[]) => invalid('body', issues)

export const testKeyCreatesLiveKey = () => new AppError('forbidden', 'A test key can only create test keys')

/** A revoked key is kept for the record only; `consequence` says what that means for the change asked. */
export const keyIsRevoked = (consequence: string) => new AppError('conflict', `This key is revoked; ${consequence}`)

// A key manages only keys no wider than itself: each restriction it has, the keys it makes or changes keep.

export const cannotGrant = (notHeld: string[]) => new AppError('forbidden', `A key cannot grant permissions it does not hold: ${notHeld.join(', ')}`, { notHeld })

export const widerAddresses = (allowedIps: string[]) =>
  new AppError('forbidden', 'This key is limited to some addresses; the keys it manages must stay within them', { allowedIps })

export const widerScope = (scopeFilters: { domains?: string[]; tags?: string[] }) =>
  new AppError('forbidden', 'This key has scope filters; the keys it manages must stay within them', { scopeFilters })

export const otherSchedule = (schedule: Schedule) => new AppError('forbidden', 'This key has a schedule; the keys it manages keep the same schedule', { schedule })

export const higherCap = (monthlyCallCap: number) =>
  new AppError('forbidden', `This key is capped at ${monthlyCallCap} calls a month; the keys it manages cannot exceed that`)

export const fasterRate = (perMinute: number) => new AppError('forbidden', `This key is limited to ${perMinute} requests a minute; the keys it manages cannot exceed that`)

export const outlivesCaller = (expiresAt: number) => new AppError('forbidden', `This key expires at ${iso(expiresAt)}; the keys it manages cannot outlive it`)

/** The target key is wider than the caller in the way `why` (one of the refusals above) says. */
export const cannotManageWider = (id: string, why: AppError) =>
  new AppError('forbidden', `This key cannot manage API key ${id}, which is wider than itself: ${why.message}`, why.details)
