// The analytics reads (repo.ts has the meaning) on PostgreSQL: the same SQL on Bun's client with numbered
// placeholders. Bun answers bigint columns and counts as strings and bytea as Buffer, so every row is turned
// into the port's shape (numbers, Uint8Array sketches, is_bot as 0/1) before it leaves this file.
import type { SQL } from 'bun'
import type { PgDb } from '../../db/pg/client'
import type { AsyncPort } from '../../db/rows'
import { HOUR_MS } from '../../platform/time'
import { MARK_KEYS, marksOf, wholeWorkspace, type AnalyticsRepo, type AnalyticsScope, type ConversionFact, type RawClick, type RollupRow } from './repo'
import type { Grain } from './plan'

/** The parameters of one statement: `add` answers the placeholder ($1, $2…) of the value it keeps. */
class Params {
  readonly list: unknown[] = []
  add(value: unknown): string {
    this.list.push(value)
    return `$${this.list.length}`
  }
  each(values: readonly unknown[]): string {
    return values.map((v) => this.add(v)).join(', ')
  }
}

/** The condition that picks the scope's links as `l` (repo.ts's linksOf). */
function linksOf(p: Params, s: AnalyticsScope): string {
  const parts = [`l.workspace_id = ${p.add(s.workspaceId)}`, `l.is_test = ${p.add(s.test)}`]
  if (s.linkId) parts.push(`l.id = ${p.add(s.linkId)}`)
  if (s.domains?.length) parts.push(`l.domain IN (${p.each(s.domains)})`)
  if (s.tags?.length) parts.push(`EXISTS (SELECT 1 FROM link_tags t WHERE t.link_id = l.id AND t.tag IN (${p.each(s.tags)}))`)
  return parts.join(' AND ')
}

type Row = Record<string, unknown>

const num = (v: unknown) => Number(v)
const sketch = (v: unknown) => (v === null ? null : new Uint8Array(v as Buffer))

function rollupRow(r: Row): RollupRow {
  const row: RollupRow = { ...('linkId' in r && { linkId: r.linkId as string }), bucket: num(r.bucket), clicks: num(r.clicks), bots: num(r.bots), visitors: sketch(r.visitors) }
  if ('dims' in r) row.dims = r.dims as string
  return row
}

const counted = (rows: Row[]) => rows.map((r) => ({ linkId: r.linkId as string, clicks: num(r.clicks) }))

export function createAnalyticsRepoPg(db: PgDb): AsyncPort<AnalyticsRepo> {
  const client: SQL = db.$client
  const all = (c: SQL, text: string, p: Params) => c.unsafe(text, p.list) as Promise<Row[]>

  return {
    async rollups(s: AnalyticsScope, grain: Grain, from: number, to: number, withDims: boolean): Promise<RollupRow[]> {
      const p = new Params()
      const cols = `r.bucket AS bucket, r.clicks AS clicks, r.bots AS bots, r.visitors AS visitors${withDims ? ', r.dims AS dims' : ''}`
      const range = `r.grain = ${p.add(grain)} AND r.bucket >= ${p.add(from)} AND r.bucket < ${p.add(to)}`
      const text = wholeWorkspace(s)
        ? `SELECT ${cols} FROM workspace_rollups r WHERE r.workspace_id = ${p.add(s.workspaceId)} AND ${range}`
        : `SELECT r.link_id AS "linkId", ${cols} FROM links l JOIN link_rollups r ON r.link_id = l.id AND ${range} WHERE ${linksOf(p, s)}`
      return (await all(client, text, p)).map(rollupRow)
    },

    async rollupMarks() {
      const p = new Params()
      return marksOf((await all(client, `SELECT key, value FROM settings WHERE key IN (${p.each(MARK_KEYS)})`, p)) as { key: string; value: string }[])
    },

    async clicksPerLink(s: AnalyticsScope, grain: Grain, from: number, to: number) {
      const p = new Params()
      const range = `r.grain = ${p.add(grain)} AND r.bucket >= ${p.add(from)} AND r.bucket < ${p.add(to)}`
      const rows = await all(client, `SELECT l.id AS "linkId", (SELECT SUM(r.clicks) FROM link_rollups r WHERE r.link_id = l.id AND ${range}) AS clicks FROM links l WHERE ${linksOf(p, s)}`, p)
      // SUM over no rows is NULL, as on SQLite: the link had no clicks in the range.
      return rows.map((r) => ({ linkId: r.linkId as string, clicks: r.clicks === null ? null : num(r.clicks) }))
    },

    async linkSketches(linkIds: readonly string[], grain: Grain, from: number, to: number) {
      if (!linkIds.length) return []
      const p = new Params()
      const text = `SELECT link_id AS "linkId", bucket, clicks, bots, visitors FROM link_rollups WHERE link_id IN (${p.each(linkIds)}) AND grain = ${p.add(grain)} AND bucket >= ${p.add(from)} AND bucket < ${p.add(to)}`
      return (await all(client, text, p)).map(rollupRow)
    },

    async rawClicks(s: AnalyticsScope, from: number, to: number): Promise<RawClick[]> {
      const p = new Params()
      const rows = await all(
        client,
        `SELECT c.link_id AS "linkId", c.clicked_at AS "clickedAt", c.visitor_hash AS visitor, c.is_bot::int AS "isBot", c.country AS country, c.referrer_host AS referrer, c.browser AS browser, c.os AS os, c.device AS device
         FROM links l JOIN clicks c ON c.link_id = l.id AND c.clicked_at >= ${p.add(from)} AND c.clicked_at < ${p.add(to)} WHERE ${linksOf(p, s)}`,
        p,
      )
      return rows.map((r) => ({ ...(r as unknown as RawClick), clickedAt: num(r.clickedAt) }))
    },

    async rawClicksPerLink(s: AnalyticsScope, from: number, to: number) {
      const p = new Params()
      const rows = await all(
        client,
        `SELECT l.id AS "linkId", (SELECT COUNT(*) FROM clicks c WHERE c.link_id = l.id AND c.clicked_at >= ${p.add(from)} AND c.clicked_at < ${p.add(to)} AND NOT c.is_bot) AS clicks FROM links l WHERE ${linksOf(p, s)}`,
        p,
      )
      return counted(rows).filter((r) => r.clicks > 0)
    },

    async clicksPerLinkOutside(s: AnalyticsScope, hour: number, from: number, to: number) {
      // One snapshot for the hour's rollups and the raw clicks subtracted from them: at READ COMMITTED each
      // statement would see its own, and a flush committing between them would count its clicks once only.
      return client.begin('ISOLATION LEVEL REPEATABLE READ READ ONLY', async (tx) => {
        const counts = new Map<string, number>()
        const p = new Params()
        const rolled = await all(tx, `SELECT r.link_id AS "linkId", r.clicks AS clicks FROM links l JOIN link_rollups r ON r.link_id = l.id AND r.grain = 'hour' AND r.bucket = ${p.add(hour)} WHERE ${linksOf(p, s)}`, p)
        for (const r of counted(rolled)) counts.set(r.linkId, r.clicks)
        for (const [a, b] of [[hour, from], [to, hour + HOUR_MS]] as const) {
          if (a >= b) continue
          const q = new Params()
          const raw = await all(
            tx,
            `SELECT c.link_id AS "linkId", COUNT(*) AS clicks FROM links l JOIN clicks c ON c.link_id = l.id AND c.clicked_at >= ${q.add(a)} AND c.clicked_at < ${q.add(b)} AND NOT c.is_bot WHERE ${linksOf(q, s)} GROUP BY c.link_id`,
            q,
          )
          for (const r of counted(raw)) counts.set(r.linkId, (counts.get(r.linkId) ?? 0) - r.clicks)
        }
        return [...counts].filter(([, n]) => n > 0).map(([linkId, clicks]) => ({ linkId, clicks }))
      })
    },

    async rawVisitors(linkIds: readonly string[], from: number, to: number) {
      if (!linkIds.length) return []
      const p = new Params()
      // All the links in one round trip (SQLite asks link by link: it has no network between). Ordered as
      // SQLite reads them from the covering index, so both engines pack the same string.
      const rows = await all(
        client,
        `SELECT link_id AS "linkId", string_agg(substr(visitor_hash, 1, 11), '' ORDER BY clicked_at, visitor_hash) AS packed FROM clicks
         WHERE link_id IN (${p.each(linkIds)}) AND clicked_at >= ${p.add(from)} AND clicked_at < ${p.add(to)} AND NOT is_bot GROUP BY link_id`,
        p,
      )
      const packed = new Map(rows.map((r) => [r.linkId as string, r.packed as string]))
      return linkIds.map((linkId) => ({ linkId, packed: packed.get(linkId) ?? '' }))
    },

    async conversions(s: AnalyticsScope, from: number, to: number): Promise<ConversionFact[]> {
      const p = new Params()
      const rows = await all(
        client,
        `SELECT v.link_id AS "linkId", v.created_at AS "createdAt", v.currency AS currency, v.value AS value
         FROM links l JOIN conversions v ON v.link_id = l.id AND v.created_at >= ${p.add(from)} AND v.created_at < ${p.add(to)} WHERE ${linksOf(p, s)}`,
        p,
      )
      return rows.map((r) => ({ ...(r as unknown as ConversionFact), createdAt: num(r.createdAt) }))
    },

    async countLinks(s: AnalyticsScope) {
      const p = new Params()
      const [row] = await all(client, `SELECT COUNT(*) AS n FROM links l WHERE ${linksOf(p, s)}`, p)
      return num(row!.n)
    },

    async linkDetails(ids: readonly string[]) {
      if (!ids.length) return []
      const p = new Params()
      const rows = await all(client, `SELECT id, slug, domain, destination_url AS "destinationUrl", title FROM links WHERE id IN (${p.each(ids)})`, p)
      return rows as { id: string; slug: string; domain: string; destinationUrl: string; title: string | null }[]
    },
  }
}
