// An IANA time zone name as the API takes it: a key's schedule (schedule.timezone) and analytics (tz).
//
// The document lists the runtime's canonical zone names (Intl.supportedValuesOf) as an enum, so a client or a
// fuzzer knows which names exist. The services accept exactly the names Intl knows: those, plus the aliases
// and other capitalisations the time zone data also reads (Asia/Calcutta, US/Eastern, Etc/UTC, europe/berlin),
// which no API can list; browsers report some of those aliases as the user's own zone, so refusing them
// would break clients. An offset such as "+01:00", which Intl also reads, names no zone and is refused. The
// description says all of this. The route does not check (publishedString): the service names the field
// (api-keys/schedule.ts isValidTimeZone, analytics/time.ts isTimeZone), where the validator would list all
// the names in its message, or say only "schedule: Expected union value" inside a nullable schedule.
import { publishedString } from './published-schema'

/** The canonical names of this runtime's time zone data. */
export const TIME_ZONES: readonly string[] = Intl.supportedValuesOf('timeZone')

/** One schema wherever a zone is read (titled, so the document states the list once, as a component). */
export const timeZoneName = () =>
  publishedString('TimeZoneName', {
    title: 'TimeZone',
    enum: [...TIME_ZONES],
    description:
      "An IANA time zone name as the server's time zone data lists it (Europe/Berlin, America/New_York, UTC). Aliases that data also knows " +
      '(Asia/Calcutta, US/Eastern, Etc/UTC) and other capitalisations are accepted too; any other name, or an offset such as +01:00, is 400 ' +
      'validation_failed.',
  })
