// Every way the identity area refuses (a call's key, by authentication and the rules of policy.ts; bootstrap
// and the admin CLI's workspace, member and key commands; the sandbox of test keys), by name. Codes,
// messages, details and headers are published: change them only as the contract allows (messages may
// change, codes and details not).
import { AppError, invalid, notFound } from '../../platform/errors'
import type { Schedule } from './model'

export const userNotFound = (email: string) => notFound(`user ${email}`)

export const workspaceNotFound = (ref: string) => notFound(`workspace "${ref}"`)

/** X-Workspace-Id sent empty, or longer than any workspace id or slug can be: a malformed request, not a stranger's workspace. */
export const badWorkspaceHeader = (message: string) => invalid('headers', [{ path: 'X-Workspace-Id', message }])

/** Workspace slugs come from their names, so two names can ask for one slug. */
export const workspaceSlugTaken = (slug: string) => new AppError('conflict', `a workspace with slug "${slug}" already exists`)

export const workspaceHasNoOwner = (slug: string) => new AppError('conflict', `workspace "${slug}" has no user to own the key; run admin bootstrap`)

/** A name that makes no slug (only punctuation, say). */
export const workspaceNameUnusable = () => invalid('body', [{ path: 'workspace', message: 'the workspace name needs at least one letter or digit' }])

export const notAnEmail = (value: string) => invalid('body', [{ path: 'email', message: `"${value}" is not an email address` }])

/** `reason`: what is wrong with the list of permissions (permissions.ts says). */
export const badPermissions = (reason: string) => invalid('body', [{ path: 'permissions', message: reason }])

export const badKeyName = () => invalid('body', [{ path: 'name', message: 'must be 1-100 characters' }])

/** A test key asked a list for more than its sandbox (`asked`: live or all): refused, not cut down to test records. */
export const testKeySandboxed = (records: string, asked: string) =>
  new AppError('forbidden', `A test key sees only test ${records}; leave mode out or send mode=test (mode=${asked} needs a live key)`, {
    mode: asked,
    keyMode: 'test',
  })

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

export const keyPaused = (reason: string | null) =>
  new AppError('key_paused', `This API key is paused${reason ? ` (${reason})` : ''}; resume it to use it again`)

export const ipNotAllowed = (ip: string | null) =>
  new AppError('ip_not_allowed', `This API key may not be used from ${ip ?? 'an unknown address'}; call from an address in its allowedIps or change the list`, {
    ip,
  })

const hhmm = (m: number) => `${String(Math.floor(m / 60) % 24).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`

export const outsideSchedule = (s: Schedule) =>
  new AppError(
    'outside_schedule',
    `This API key works only ${hhmm(s.startMinute)}-${hhmm(s.endMinute)} (${s.timezone}) on days ${s.days.join(',')} (0 = Sunday)`,
    { schedule: s },
  )

/**
 * The user of the key is not a member of the workspace asked for (`ownWorkspace`: the key's own one, which
 * it has since left).
 */
export const notAMember = (workspaceRef: string, ownWorkspace: boolean) =>
  new AppError(
    'forbidden',
    ownWorkspace ? "This key's user is no longer a member of its workspace" : `You are not a member of workspace "${workspaceRef.slice(0, 64)}"`,
  )

/** `retryAfter`: seconds until the month turns (UTC). */
export const monthlyCapExceeded = (monthlyCallCap: number | null, retryAfter: number) =>
  new AppError(
    'monthly_cap_exceeded',
    `This key has used its ${monthlyCallCap} calls for this month; it works again when the month turns (UTC)`,
    { monthlyCallCap },
    { 'Retry-After': String(retryAfter) },
  )

export const rateLimited = (limit: number, retryAfter: number) =>
  new AppError(
    'rate_limited',
    `Too many requests: this key may make ${limit} a minute; retry in ${retryAfter} s`,
    { limit },
    { 'Retry-After': String(retryAfter) },
  )

export const permissionMissing = (required: string) => new AppError('forbidden', `This key lacks the ${required} permission`, { required })
