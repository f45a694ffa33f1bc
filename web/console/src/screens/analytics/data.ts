// The analytics answers the screens read (GET /v1/analytics/overview, timeline and top-links; see
// docs/analytics.md), and the one call that loads a screen's figures for a range.
import { api } from '../../api'
import type { Interval, RangeQuery } from './range'

export type Revenue = Record<string, number>
export interface Breakdown {
  value: string | null
  clicks: number
}

export interface Overview {
  from: string
  to: string
  tz: string
  linkId: string | null
  totals: { clicks: number; uniqueVisitors: number; botHits: number; links: number; conversions: number; revenue: Revenue }
  top: { countries: Breakdown[]; referrers: Breakdown[]; browsers: Breakdown[]; os: Breakdown[]; devices: Breakdown[] }
}

export interface Bucket {
  start: string
  localStart: string
  clicks: number
  uniqueClicks: number
  conversions: number
  revenue: Revenue
}

export interface Timeline {
  from: string
  to: string
  tz: string
  interval: Interval
  linkId: string | null
  buckets: Bucket[]
}

export type Sort = 'clicks' | 'uniqueClicks' | 'conversions' | 'revenue'

export interface TopLink {
  id: string
  slug: string
  domain: string
  shortUrl: string
  destinationUrl: string
  title: string | null
  clicks: number
  uniqueClicks: number
  conversions: number
  revenue: Revenue
}

export interface TopLinks {
  sort: Sort
  currency: string | null
  links: TopLink[]
}

export interface Figures {
  overview: Overview
  timeline: Timeline
}

export async function loadFigures(q: RangeQuery, linkId?: string): Promise<Figures> {
  const range = { from: q.from, to: q.to, tz: q.tz, linkId }
  const [overview, timeline] = await Promise.all([
    api.get<Overview>('/analytics/overview', range),
    api.get<Timeline>('/analytics/timeline', { ...range, interval: q.interval }),
  ])
  return { overview, timeline }
}

export const loadTopLinks = (q: RangeQuery, sort: Sort) => api.get<TopLinks>('/analytics/top-links', { from: q.from, to: q.to, tz: q.tz, sort, limit: 10 })
