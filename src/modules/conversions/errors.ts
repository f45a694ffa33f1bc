// Every way the conversion beacon refuses, by name. Codes, messages and details are published: change them
// only as the contract allows (messages may change, codes and details not).
import { AppError, invalid, type ValidationIssue } from '../../platform/errors'

/** A beacon's body breaks the rules (every problem at once). */
export const invalidConversion = (issues: ValidationIssue[]) => invalid('body', issues, 'Invalid conversion')

/** The click is a real one, but its link does not track conversions. */
export const clickNotTracked = () =>
  invalidConversion([{ path: 'clickId', message: 'belongs to a link that does not track conversions: turn on conversionTracking for the link' }])

/** No click a conversion can name: unknown, a bot's hit or a test click alike. */
export const clickNotFound = (clickId: string) =>
  new AppError('not_found', `Click ${clickId} not found: clickId must be the lnk_cid a redirect of a link with conversionTracking handed the destination`)

export const conversionTooLarge = (limit: number) => new AppError('payload_too_large', `A conversion body may be at most ${limit} bytes`, { limit })

/** `type`: the Content-Type sent, without parameters. */
export const unreadableBeaconType = (type: string) =>
  new AppError(
    'invalid_request',
    `Send the conversion as JSON, with Content-Type application/json or text/plain (what navigator.sendBeacon sends for a string), not ${type.slice(0, 100)}`,
  )

export const malformedBeacon = (err: Error) => new AppError('invalid_request', `Malformed JSON body: ${err.message}`)

/** Over the per-address limit of beacons a minute. */
export const tooManyConversions = (limit: number, retryAfter: number) =>
  new AppError(
    'rate_limited',
    `Too many conversions from this address: at most ${limit} a minute; retry in ${retryAfter} s`,
    { limit },
    { 'Retry-After': String(retryAfter) },
  )
