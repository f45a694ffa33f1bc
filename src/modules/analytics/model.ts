// Request and response shapes of the analytics routes (TypeBox), also their OpenAPI description.
import type { TLiteral } from '@sinclair/typebox'
import { t } from 'elysia'
import { publishedString } from '../../http/published-schema'
import { timeZoneName } from '../../http/time-zone'
import { HLL_STANDARD_ERROR } from './hll'
import { BREAKDOWN_LIMIT, BREAKDOWN_MAX } from './breakdown-values'
import { BREAKDOWN_DIMENSIONS, type BreakdownDimension } from './port'
import { MAX_BUCKETS, MAX_RANGE_DAYS, TOP_LINKS_MAX, TOP_LIMIT } from './query'

const pct = (HLL_STANDARD_ERROR * 100).toFixed(1)

export const IntervalSchema = t.Union([t.Literal('hour'), t.Literal('day'), t.Literal('week'), t.Literal('month')])
export const SortSchema = t.Union([t.Literal('clicks'), t.Literal('uniqueClicks'), t.Literal('conversions'), t.Literal('revenue')])

/**
 * A date, a date-time with an offset, or a local date-time (read in tz). The forms are published; the service
 * (parseInstant) decides, with a message naming the parameter: a `date-time` format check would refuse the
 * local form, which has no offset, and seconds-less times (see links/http/published-schema.ts).
 */
/**
 * The local form as the document states it: each field within its range (month 01-12, hour 00-23…), which
 * the service checks too; the parser's own pattern only shapes the text. A day past the month's end (02-30)
 * fits this and is refused as naming no real date.
 */
const PUBLISHED_LOCAL_DATE_TIME = '^\\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\\d|3[01])T(?:[01]\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d(?:\\.\\d{1,3})?)?$'

const instant = (description: string) =>
  publishedString('DateOrDateTime', {
    maxLength: 40,
    anyOf: [
      { type: 'string', format: 'date', description: 'A date: 2026-03-01' },
      { type: 'string', format: 'date-time', description: 'A date-time with an offset: 2026-03-01T12:00:00Z, 2026-03-01T12:00:00+01:00' },
      { type: 'string', pattern: PUBLISHED_LOCAL_DATE_TIME, description: 'A local date-time in tz, without an offset: 2026-03-01T12:00' },
    ],
    description,
  })

export const RangeParams = {
  from: t.Optional(
    instant(
      'Start (inclusive): an ISO 8601 date (local midnight in tz) or date-time (without an offset: local time in tz). Default: 29 days before to, at ' +
        'local midnight.',
    ),
  ),
  to: t.Optional(instant(`End (exclusive for a date-time; a date includes that whole day). Default: now. At most ${MAX_RANGE_DAYS} days after from.`)),
  tz: t.Optional(timeZoneName()),
}

const Revenue = t.Record(t.String({ pattern: '^[A-Z]{3}$' }), t.Number(), {
  description: 'Sum of conversion values per ISO 4217 currency, e.g. {"EUR": 59.97}',
})
const Breakdown = t.Array(
  t.Object({ value: t.Union([t.String(), t.Null()], { description: 'null: unknown (country, browser…) or a direct visit (referrer)' }), clicks: t.Integer() }),
)

export const Overview = t.Object({
  from: t.String({ format: 'date-time' }),
  to: t.String({ format: 'date-time' }),
  tz: t.String(),
  linkId: t.Union([t.String(), t.Null()]),
  totals: t.Object({
    clicks: t.Integer({ description: "People's clicks (bots excluded)" }),
    uniqueVisitors: t.Integer({
      description: `Distinct visitors (address + user agent) over the range: exact below ~1,000, then HyperLogLog with a standard error of ${pct} %`,
    }),
    botHits: t.Integer({ description: 'Hits by bots and link-preview crawlers; never part of clicks' }),
    links: t.Integer({ description: "Live links in scope now (test links excluded); for a test key, the workspace's test links" }),
    conversions: t.Integer(),
    revenue: Revenue,
  }),
  top: t.Object(
    {
      countries: Breakdown,
      referrers: Breakdown,
      browsers: Breakdown,
      os: Breakdown,
      devices: Breakdown,
    },
    { description: `The ${TOP_LIMIT} most clicked values of each dimension` },
  ),
})

export const Timeline = t.Object({
  from: t.String({ format: 'date-time' }),
  to: t.String({ format: 'date-time' }),
  tz: t.String(),
  interval: IntervalSchema,
  linkId: t.Union([t.String(), t.Null()]),
  buckets: t.Array(
    t.Object({
      start: t.String({ format: 'date-time', description: 'Bucket start (UTC)' }),
      localStart: t.String({ description: 'The same instant with the offset of tz: 2026-03-08T00:00:00.000-05:00' }),
      clicks: t.Integer(),
      uniqueClicks: t.Integer({ description: 'Distinct visitors within the bucket' }),
      conversions: t.Integer(),
      revenue: Revenue,
    }),
    { description: `Zero-filled, in time order; at most ${MAX_BUCKETS}` },
  ),
})

export const TopLinks = t.Object({
  from: t.String({ format: 'date-time' }),
  to: t.String({ format: 'date-time' }),
  tz: t.String(),
  sort: SortSchema,
  currency: t.Union([t.String(), t.Null()], { description: 'With sort=revenue: the currency ranked by' }),
  links: t.Array(
    t.Object({
      id: t.String(),
      slug: t.String(),
      domain: t.String(),
      shortUrl: t.String(),
      destinationUrl: t.String(),
      title: t.Union([t.String(), t.Null()]),
      clicks: t.Integer(),
      uniqueClicks: t.Integer({ description: 'Distinct visitors of this link within the range' }),
      conversions: t.Integer(),
      revenue: Revenue,
    }),
  ),
})

export const TopLinksLimit = t.Integer({ minimum: 1, maximum: TOP_LINKS_MAX, default: TOP_LIMIT })

const BreakdownFiguresOf = (what: string) => ({
  clicks: t.Integer({ description: `People's clicks ${what} (bots excluded)` }),
  uniqueClicks: t.Integer({ description: `Distinct visitors (address + user agent) ${what}, exact` }),
  conversions: t.Integer({ description: `Conversions recorded in the range whose click was ${what}` }),
  revenue: Revenue,
})

// A union of literals (as the other enumerations here): the validation error of a wrong value lists them. The
// cast gives it the static type of the list, which a mapped array would widen.
export const BreakdownDimensionSchema = t.Union(BREAKDOWN_DIMENSIONS.map((d) => t.Literal(d)) as [TLiteral<BreakdownDimension>], {
  description:
    'What to count by. language, trigger and the utm* dimensions of the contract are not offered yet: clicks do not record them. See docs/analytics.md.',
})

export const BreakdownSortSchema = t.Union(SortSchema.anyOf, {
  default: 'clicks',
  description: 'Rank by this figure, best first; ties go to more clicks, then to the value (null last)',
})

export const BreakdownLimit = t.Integer({ minimum: 1, maximum: BREAKDOWN_MAX, default: BREAKDOWN_LIMIT, description: 'How many values, best first' })

export const BreakdownAnswer = t.Object({
  dimension: BreakdownDimensionSchema,
  from: t.String({ format: 'date-time' }),
  to: t.String({ format: 'date-time' }),
  tz: t.String(),
  linkId: t.Union([t.String(), t.Null()]),
  sort: BreakdownSortSchema,
  currency: t.Union([t.String(), t.Null()], { description: 'With sort=revenue: the currency ranked by' }),
  rows: t.Array(
    t.Object({
      value: t.Union([t.String(), t.Null()], {
        description:
          'The value (a link, rule or variant by its id); null: unknown (country, city…), ' +
          'none (campaign, folder, tag, rule, variant) or a direct visit (referrer)',
      }),
      ...BreakdownFiguresOf('with this value'),
    }),
  ),
  totals: t.Object(BreakdownFiguresOf('in the range'), {
    description: 'The whole range, every value: a click counts once even when its link has several tags',
  }),
})
