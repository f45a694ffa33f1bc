// An IANA time zone name as the API takes it: a key's schedule (schedule.timezone) and analytics (tz).
//
// Two checks, and the document states both. The form is this schema's pattern, which the route validates
// (so "+01:00", which Intl would read as an offset, is refused: it names no IANA zone). Whether the zone
// exists is the service's check against the runtime's time zone data (Intl), stated in the description: the
// set of names Intl knows includes aliases (Asia/Calcutta, US/Eastern, Etc/UTC) and any capitalisation that
// Intl.supportedValuesOf('timeZone') does not list, and browsers report some of those aliases as the user's
// zone, so an enum of the canonical names would refuse what clients send. A name of the right form that no
// zone has is 400 validation_failed from the service, naming the field.
import { t } from 'elysia'
import { publishedString } from './published-schema'

/** Area/Location[/Sub-location], or a single name such as UTC; letters, digits, _ + - (Etc/GMT+5). */
export const TIME_ZONE_PATTERN = '^[A-Za-z][A-Za-z0-9_+-]*(?:/[A-Za-z0-9_+-]+){0,2}$'
export const TIME_ZONE_MAX_LENGTH = 64

const keywords = (description: string) => ({
  minLength: 1,
  maxLength: TIME_ZONE_MAX_LENGTH,
  pattern: TIME_ZONE_PATTERN,
  description: `${description}. An IANA time zone name the server's time zone data knows (Europe/Berlin, America/New_York, UTC); a name of this form that names no zone is 400`,
})

/** The route checks the form, the service that the zone exists. */
export const timeZoneName = (description: string) => t.String(keywords(description))

/**
 * Published only: the service checks both the form and the zone (api-keys/schedule.ts isValidTimeZone), for
 * a zone inside an object the validator could not name (a nullable schedule).
 */
export const publishedTimeZoneName = (description: string) => publishedString('TimeZoneName', keywords(description))
