// The breakdown's read on either engine: raw clicks (people only) and the conversions of the range, each
// given its dimension's value, put together in one UNION ALL and grouped, ranked and cut in SQL, so only the
// rows asked for leave the database. Exact: visitors are counted distinct per value, not sketched.
//
// Index use: the scope's links are found first (the workspace's links by links_workspace_created_idx, or
// the one link), then each link's clicks are a range of clicks_link_time_idx (link, time, is_bot, visitor).
// A workspace-wide question is thus a range scan per link rather than a scan of every workspace's clicks;
// the dimension's column is read from the click's row.
import { and, count, eq, gte, inArray, isNull, lt, or, sql, type SQL } from 'drizzle-orm'
import { rows, type Builder, type Engine } from '../../db/engine'
import { scopeLinks } from './repo-scope'
import { continentMembers, leadingCurrency } from './breakdown-values'
import type { AnalyticsScope, BreakdownDimension, BreakdownFigures, BreakdownQuery, BreakdownRepo } from './port'

export function createBreakdownRepo(engine: Engine): BreakdownRepo {
  const { clicks, conversions, links, linkTags } = engine.t

  const linksOf = (db: Builder, s: AnalyticsScope): SQL => scopeLinks(db, engine.t, s)

  // A continent is read from the country as a CASE over each continent's members (a fixed, small list).
  const continentOfCountry = (): SQL => {
    const branches = continentMembers().map(([continent, countries]) => sql`WHEN ${inArray(clicks.country, countries)} THEN ${continent}`)
    return sql`CASE ${sql.join(branches, sql` `)} END`
  }

  /** The dimension's value of a click (its link's, for the link's fields; null: unknown or none). */
  const dimensionOf = (d: BreakdownDimension | null): SQL => {
    switch (d) {
      case null:
        return sql`NULL`
      case 'country':
        return sql`${clicks.country}`
      case 'continent':
        return continentOfCountry()
      case 'city':
        return sql`${clicks.city}`
      case 'device':
        return sql`${clicks.device}`
      case 'browser':
        return sql`${clicks.browser}`
      case 'os':
        return sql`${clicks.os}`
      case 'referrer':
        return sql`${clicks.referrerHost}`
      case 'link':
        return sql`${clicks.linkId}`
      case 'domain':
        return sql`${links.domain}`
      case 'tag':
        return sql`${linkTags.tag}`
      case 'campaign':
        return sql`${links.campaignId}`
      case 'folder':
        return sql`${links.folderId}`
      case 'rule':
        return sql`${clicks.ruleId}`
      case 'variant':
        return sql`${clicks.variantId}`
    }
  }

  const clickRange = (from: number, to: number) => and(gte(clicks.clickedAt, from), lt(clicks.clickedAt, to))

  /**
   * Every people's click of the range and every conversion of the range (counted when recorded, as overview
   * counts them, with its click's value), one row each: `n` 1 for a click, `conv` 1 for a conversion,
   * `amount` its value in `currency` (0 otherwise). The tag dimension joins the link's tags: a click counts
   * once per tag (an untagged link's once, as null).
   */
  const facts = (db: Builder, q: BreakdownQuery, currency: string | null) => {
    const d = q.dimension
    const withTags = <T extends { leftJoin: (...a: any[]) => T }>(query: T): T =>
      d === 'tag' ? query.leftJoin(linkTags, eq(linkTags.linkId, links.id)) : query
    const ofClicks = withTags(
      db
        .select({
          v: sql<string | null>`${dimensionOf(d)}`.as('v'),
          visitor: sql<string | null>`${clicks.visitorHash}`.as('visitor'),
          n: sql<number>`1`.as('n'),
          conv: sql<number>`0`.as('conv'),
          amount: sql<number>`0`.as('amount'),
        })
        .from(links)
        .innerJoin(clicks, and(eq(clicks.linkId, links.id), clickRange(q.from, q.to), eq(clicks.isBot, false)))
        .$dynamic(),
    ).where(linksOf(db, q.scope))
    const amount = currency === null ? sql`0` : sql`CASE WHEN ${conversions.currency} = ${currency} THEN ${conversions.value} ELSE 0 END`
    const ofConversions = withTags(
      db
        .select({
          v: sql<string | null>`${dimensionOf(d)}`.as('v'),
          visitor: sql<string | null>`NULL`.as('visitor'),
          n: sql<number>`0`.as('n'),
          conv: sql<number>`1`.as('conv'),
          amount: sql<number>`${amount}`.as('amount'),
        })
        .from(links)
        .innerJoin(conversions, and(eq(conversions.linkId, links.id), gte(conversions.createdAt, q.from), lt(conversions.createdAt, q.to)))
        .innerJoin(clicks, eq(clicks.id, conversions.clickId))
        .$dynamic(),
    ).where(linksOf(db, q.scope))
    return ofClicks.unionAll(ofConversions).as('f')
  }

  /** Conversions and revenue per currency of the given values (all values: `values` undefined). */
  const revenueOf = (db: Builder, q: BreakdownQuery, values?: (string | null)[]) => {
    const d = values ? q.dimension : null
    const c = db
      .select({ v: sql<string | null>`${dimensionOf(d)}`.as('v'), currency: conversions.currency, value: conversions.value })
      .from(links)
      .innerJoin(conversions, and(eq(conversions.linkId, links.id), gte(conversions.createdAt, q.from), lt(conversions.createdAt, q.to)))
      .innerJoin(clicks, eq(clicks.id, conversions.clickId))
      .$dynamic()
    const inner = (d === 'tag' ? c.leftJoin(linkTags, eq(linkTags.linkId, links.id)) : c).where(linksOf(db, q.scope)).as('c')
    const named = values?.filter((v): v is string => v !== null) ?? []
    const which = values ? or(named.length ? inArray(sql`${inner.v}`, named) : undefined, values.includes(null) ? isNull(inner.v) : undefined) : undefined
    return db
      .select({
        v: inner.v,
        currency: inner.currency,
        conversions: sql<number>`COUNT(*)`.mapWith(Number),
        revenue: sql<number | null>`SUM(${inner.value})`.mapWith(Number),
      })
      .from(inner)
      .where(which)
      .groupBy(sql`${inner.v}`, inner.currency)
  }

  const empty = (): BreakdownFigures => ({ clicks: 0, uniqueClicks: 0, conversions: 0, revenue: {} })
  const add = (f: BreakdownFigures, r: { currency: string | null; conversions: number; revenue: number | null }) => {
    f.conversions += r.conversions
    if (r.currency !== null && r.revenue !== null) f.revenue[r.currency] = (f.revenue[r.currency] ?? 0) + r.revenue
  }

  return {
    breakdown: (q) =>
      // One snapshot: the totals and the rows agree even while clicks are flushed meanwhile.
      engine.transaction(
        function* (db) {
          const totals = empty()
          const [counted] = yield* rows(
            db
              .select({ clicks: count(), uniqueClicks: sql<number>`COUNT(DISTINCT ${clicks.visitorHash})`.mapWith(Number) })
              .from(links)
              .innerJoin(clicks, and(eq(clicks.linkId, links.id), clickRange(q.from, q.to), eq(clicks.isBot, false)))
              .where(linksOf(db, q.scope)),
          )
          totals.clicks = counted!.clicks
          totals.uniqueClicks = counted!.uniqueClicks
          const perCurrency = yield* rows(revenueOf(db, q))
          for (const r of perCurrency) add(totals, r)
          const currency = q.sort === 'revenue' ? (q.currency ?? leadingCurrency(perCurrency)) : null

          const f = facts(db, q, currency)
          const figures = {
            clicks: sql<number>`SUM(${f.n})`,
            uniqueClicks: sql<number>`COUNT(DISTINCT ${f.visitor})`,
            conversions: sql<number>`SUM(${f.conv})`,
            revenue: sql<number>`SUM(${f.amount})`,
          }
          // Best first; ties go to more clicks, then to the value in byte order, null (unknown) last.
          const ranked = yield* rows(
            db
              .select({
                value: f.v,
                clicks: figures.clicks.mapWith(Number),
                uniqueClicks: figures.uniqueClicks.mapWith(Number),
                conversions: figures.conversions.mapWith(Number),
              })
              .from(f)
              .groupBy(sql`${f.v}`)
              .orderBy(
                sql`${figures[q.sort]} DESC`,
                sql`${figures.clicks} DESC`,
                sql`CASE WHEN ${f.v} IS NULL THEN 1 ELSE 0 END`,
                engine.byteOrder(sql`${f.v}`),
              )
              .limit(q.limit),
          )
          const revenue = new Map<string | null, BreakdownFigures>()
          const out = ranked.map((r) => {
            const row = { value: r.value, clicks: r.clicks, uniqueClicks: r.uniqueClicks, conversions: 0, revenue: {} }
            revenue.set(r.value, row)
            return row
          })
          // Revenue per currency of the rows shown only (a row's conversions are recounted with it).
          const converted = ranked.filter((r) => r.conversions > 0).map((r) => r.value)
          if (converted.length) for (const r of yield* rows(revenueOf(db, q, converted))) add(revenue.get(r.v)!, r)
          return { rows: out, totals, currency }
        },
        { snapshot: true },
      ),
  }
}
