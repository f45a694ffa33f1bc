// GET {base_url}/analytics/overview|timeline|top-links (spec 4.2) and breakdown (contract 7.2): analytics:read,
// the key's scope filters.
import { Elysia, t } from 'elysia'
import { Envelope, ErrorEnvelope, ok } from '../../http/envelope'
import type { HttpKit } from '../identity'
import { breakdown, type BreakdownCtx } from './breakdown'
import {
  BreakdownAnswer,
  BreakdownDimensionSchema,
  BreakdownLimit,
  BreakdownSortSchema,
  IntervalSchema,
  Overview,
  RangeParams,
  SortSchema,
  Timeline,
  TopLinks,
  TopLinksLimit,
} from './model'
import { overview, timeline } from './service'
import { topLinks } from './top-links'

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope, 429: ErrorEnvelope }
const LinkIdParam = t.Optional(
  t.String({
    maxLength: 64,
    description: 'One link (its id); the whole workspace without it. A link of the other mode (a test link to a live key, a live one to a test key) is 404',
  }),
)
const SEMANTICS =
  "Counts people's clicks on the workspace's live links within the calling key's scope filters; bots, crawler previews and test links never count. A " +
  "test key sees its sandbox only: the workspace's test links, which record no clicks, so its figures are zero. Figures include clicks up to " +
  'about a second ago. Dates, buckets and default ranges are read in tz (default UTC). See docs/analytics.md.'

export function analyticsRoutes(ctx: BreakdownCtx, http: HttpKit) {
  return new Elysia({ name: 'lnk.analytics', seed: http.instanceId, prefix: '/analytics', tags: ['Analytics'] })
    .use(http.auth)
    .get('/overview', async ({ caller, query }) => ok(await overview(ctx, caller, query)), {
      permission: 'analytics:read',
      query: t.Object({ ...RangeParams, linkId: LinkIdParam }),
      response: { 200: Envelope(Overview), ...errors },
      detail: { summary: 'Workspace overview', description: `Totals and top countries, referrers, browsers, OS and devices for a range. ${SEMANTICS}` },
    })
    .get('/timeline', async ({ caller, query }) => ok(await timeline(ctx, caller, query)), {
      permission: 'analytics:read',
      query: t.Object({
        ...RangeParams,
        linkId: LinkIdParam,
        interval: t.Optional(
          t.Union(IntervalSchema.anyOf, {
            description: 'Bucket size; chosen from the range when omitted (the finest giving at most 400 buckets). Weeks start on Monday.',
          }),
        ),
      }),
      response: { 200: Envelope(Timeline), ...errors },
      detail: { summary: 'Clicks over time', description: `Zero-filled buckets in tz (DST days have 23 or 25 hours). ${SEMANTICS}` },
    })
    .get('/top-links', async ({ caller, query }) => ok(await topLinks(ctx, caller, query)), {
      permission: 'analytics:read',
      query: t.Object({
        ...RangeParams,
        limit: TopLinksLimit,
        sort: t.Optional(t.Union(SortSchema.anyOf, { default: 'clicks' })),
        currency: t.Optional(
          t.String({ pattern: '^[A-Z]{3}$', description: 'With sort=revenue: rank by revenue in this currency (default: the one most conversions were in)' }),
        ),
      }),
      response: { 200: Envelope(TopLinks), ...errors },
      detail: { summary: 'Top links', description: `Links with clicks or conversions in the range, best first. ${SEMANTICS}` },
    })
    .get('/breakdown', async ({ caller, query }) => ok(await breakdown(ctx, caller, query)), {
      permission: 'analytics:read',
      query: t.Object({
        ...RangeParams,
        dimension: BreakdownDimensionSchema,
        linkId: LinkIdParam,
        limit: t.Optional(BreakdownLimit),
        sort: t.Optional(BreakdownSortSchema),
        currency: t.Optional(
          t.String({ pattern: '^[A-Z]{3}$', description: 'With sort=revenue: rank by revenue in this currency (default: the one most conversions were in)' }),
        ),
      }),
      response: { 200: Envelope(BreakdownAnswer), ...errors },
      detail: {
        summary: 'Breakdown by a dimension',
        description:
          'Clicks, unique visitors, conversions and revenue per value of one dimension, best first, with the totals of the range. ' +
          `Exact, from raw clicks: only the last LNK_CLICK_RETENTION_DAYS (default 400) are counted. ${SEMANTICS}`,
      },
    })
}
