// The analytics answers the screens read (GET /v1/analytics/overview, timeline, top-links and breakdown; see
// docs/analytics.md), and the one call that loads a screen's figures for a range.
import { api } from '../../api'
import type { Data } from '../../api-types'
import type { RangeQuery } from './range'

export type Overview = Data<'/analytics/overview', 'get'>
export type Timeline = Data<'/analytics/timeline', 'get'>
export type TopLinks = Data<'/analytics/top-links', 'get'>
/** Amounts by currency code. */
export type Revenue = Overview['totals']['revenue']
export type Breakdown = Overview['top']['countries'][number]
export type Bucket = Timeline['buckets'][number]
export type Sort = TopLinks['sort']
export type TopLink = TopLinks['links'][number]

export interface Figures {
  overview: Overview
  timeline: Timeline
}

export async function loadFigures(q: RangeQuery, linkId?: string): Promise<Figures> {
  const range = { from: q.from, to: q.to, tz: q.tz, linkId }
  const [overview, timeline] = await Promise.all([
    api.get<'/analytics/overview'>('/analytics/overview', range),
    api.get<'/analytics/timeline'>('/analytics/timeline', { ...range, interval: q.interval }),
  ])
  return { overview, timeline }
}

export const loadTopLinks = (q: RangeQuery, sort: Sort) =>
  api.get<'/analytics/top-links'>('/analytics/top-links', { from: q.from, to: q.to, tz: q.tz, sort, limit: 10 })

export type BreakdownAnswer = Data<'/analytics/breakdown', 'get'>
export type BreakdownDimension = BreakdownAnswer['dimension']

/** One link's clicks per value of `dimension` over the range (exact, from the clicks the server still keeps). */
export const loadBreakdown = (q: RangeQuery, linkId: string, dimension: BreakdownDimension, limit: number) =>
  api.get<'/analytics/breakdown'>('/analytics/breakdown', { from: q.from, to: q.to, tz: q.tz, linkId, dimension, limit })
