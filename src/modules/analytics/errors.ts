// Every way an analytics question is refused, by name: all are problems with its query but an unknown link.
// Codes, messages and details are published: change them only as the contract allows (messages may change,
// codes and details not).
import { invalid, notFound } from '../../platform/errors'

const badParam = (param: string, message: string) => invalid('query', [{ path: param, message }])

/** The linkId filter names no link the caller may see. */
export const unknownLink = (id: string) => notFound(`Link ${id}`)

export const unknownTimeZone = (tz: string) => badParam('tz', `"${tz}" is not an IANA time zone (for example Europe/Berlin or America/New_York)`)

export const notADate = (param: 'from' | 'to', text: string) =>
  badParam(param, `"${text.slice(0, 40)}" is not an ISO 8601 date (2026-03-01) or date-time (2026-03-01T12:00:00Z)`)

/** `from`: the instant `to` must be later than, as ISO 8601. */
export const rangeBackwards = (from: string) => badParam('to', `must be after from (${from})`)

export const rangeTooLong = (maxDays: number) => badParam('from', `a range covers at most ${maxDays} days (2 years); narrow from/to`)

export const unknownInterval = (intervals: readonly string[]) => badParam('interval', `must be one of ${intervals.join(', ')}`)

export const tooManyBuckets = (interval: string, max: number) =>
  badParam('interval', `${interval} buckets over this range would be more than ${max}; choose a longer interval or a shorter range`)
