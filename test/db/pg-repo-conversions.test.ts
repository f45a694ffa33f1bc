// The conversions repo on both engines: one script of beacons run against it on SQLite and on PostgreSQL
// gives the same answers, rows and outbox events; on PostgreSQL, identical beacons sent at
// once on separate connections are counted once, as SQLite's one-writer order counts them.
import { registerEvents } from '../../src/events/catalogue'
import { CONVERSION_EVENTS } from '../../src/modules/conversions/model'
import { afterAll, beforeAll, expect, test } from 'bun:test'
import * as pgTables from '../../src/db/pg/schema.generated'
import * as liteTables from '../../src/db/schema'
import { pgEngine } from '../../src/db/engine/pg'
import { sqliteEngine } from '../../src/db/engine/sqlite'
import { ConversionRefused, type ConversionDecision, type ConversionsRepo, type ClickOfConversion } from '../../src/modules/conversions/port'
import { createConversionsRepo } from '../../src/modules/conversions/repo'
import { openEngines, type Engines } from '../setup/engines'

// No runtime is made here, which would register the events the repo publishes: run alone, the file does it.
registerEvents(CONVERSION_EVENTS)

const T0 = 1_700_000_000_000
const DAY = 86_400_000

let e: Engines
let lite: ConversionsRepo
let pg: ConversionsRepo

/** The same row in both databases (the generated tables carry the SQLite property names). */
async function seed(table: 'workspaces' | 'links' | 'clicks', row: Record<string, unknown>) {
  e.sqlite.db
    .insert(liteTables[table] as any)
    .values(row)
    .run()
  await e.pg.insert(pgTables[table] as any).values(row)
}

const link = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  workspaceId: 'ws_1',
  domain: 'l.test',
  slug: id,
  destinationUrl: `https://dest.test/${id}`,
  tags: [],
  redirectStatus: 302,
  publicStatsEnabled: false,
  deepLinkEnabled: false,
  captchaEnabled: false,
  consentRequired: false,
  conversionTracking: true,
  isActive: true,
  isArchived: false,
  isTest: false,
  totalClicks: 0,
  uniqueClicks: 0,
  searchText: id,
  createdAt: T0,
  updatedAt: T0,
  ...extra,
})
const click = (id: string, linkId: string, isBot = false) => ({ id, linkId, workspaceId: 'ws_1', clickedAt: T0, visitorHash: 'v', isBot })

beforeAll(async () => {
  e = await openEngines()
  lite = createConversionsRepo(sqliteEngine(e.sqlite.db))
  pg = createConversionsRepo(pgEngine(e.pg))
  await seed('workspaces', { id: 'ws_1', slug: 'one', name: 'One', createdAt: T0 })
  await seed('links', link('lnk_on'))
  await seed('links', link('lnk_off', { conversionTracking: false }))
  await seed('links', link('lnk_test', { isTest: true }))
  await seed('clicks', click('clk_ok', 'lnk_on'))
  await seed('clicks', click('clk_bot', 'lnk_on', true))
  await seed('clicks', click('clk_off', 'lnk_off'))
  await seed('clicks', click('clk_test', 'lnk_test'))
})

afterAll(async () => {
  await e?.close()
})

/** The service's rules in small; `nextId` names the row, so both engines can answer alike. */
function decider(
  nextId: () => string,
  beacon: { eventName: string; value?: number; currency?: string; metadata?: Record<string, unknown> },
  fingerprint: string,
  now: number,
) {
  return (c: ClickOfConversion): ConversionDecision => {
    if (c.isBot) return new ConversionRefused('bot_click', c)
    if (c.link.isTest) return new ConversionRefused('test_click', c)
    if (!c.link.conversionTracking) return new ConversionRefused('not_tracked', c)
    const row = {
      id: nextId(),
      clickId: c.id,
      linkId: c.link.id,
      workspaceId: c.link.workspaceId,
      eventName: beacon.eventName,
      value: beacon.value ?? null,
      currency: beacon.currency ?? null,
      metadata: beacon.metadata ?? null,
      fingerprint,
      createdAt: now,
    }
    return { row, event: (r) => ({ type: 'conversion.created', workspaceId: r.workspaceId, mode: 'live', data: { conversion: r, link: c.link } }) }
  }
}

type Step = {
  clickId: string
  fingerprint: string
  at: number
  beacon: { eventName: string; value?: number; currency?: string; metadata?: Record<string, unknown> }
}

async function run(repo: ConversionsRepo, steps: Step[]) {
  let n = 0
  const nextId = () => `cnv_${++n}`
  const out: unknown[] = []
  for (const s of steps) out.push(await repo.record(s.clickId, s.fingerprint, s.at - DAY, decider(nextId, s.beacon, s.fingerprint, s.at), s.at))
  return out
}

test('one script of beacons: the same answers, conversions and events on both engines', async () => {
  const buy = { eventName: 'purchase', value: 19.99, currency: 'EUR', metadata: { plan: 'pro', seats: [1, 2], nested: { ok: true } } }
  const steps: Step[] = [
    { clickId: 'clk_missing', fingerprint: 'f0', at: T0, beacon: { eventName: 'signup' } },
    { clickId: 'clk_bot', fingerprint: 'f1', at: T0, beacon: { eventName: 'signup' } },
    { clickId: 'clk_test', fingerprint: 'f2', at: T0, beacon: { eventName: 'signup' } },
    { clickId: 'clk_off', fingerprint: 'f3', at: T0, beacon: { eventName: 'signup' } },
    { clickId: 'clk_ok', fingerprint: 'f4', at: T0 + 1, beacon: buy },
    { clickId: 'clk_ok', fingerprint: 'f4', at: T0 + 2, beacon: buy },
    { clickId: 'clk_ok', fingerprint: 'f5', at: T0 + 3, beacon: { eventName: 'signup' } },
    { clickId: 'clk_ok', fingerprint: 'f4', at: T0 + DAY, beacon: buy },
    { clickId: 'clk_ok', fingerprint: 'f4', at: T0 + DAY + 2, beacon: buy },
    { clickId: 'clk_ok', fingerprint: 'f4', at: T0 + DAY + 3, beacon: buy },
  ]
  const onLite = await run(lite, steps)
  const onPg = await run(pg, steps)
  expect(onPg).toEqual(onLite)
  // The script says what it means, not only that both engines agree.
  expect((onLite[0] as ConversionRefused).reason).toBe('unknown_click')
  expect((onLite[3] as ConversionRefused).reason).toBe('not_tracked')
  expect(onLite.slice(4).map((o) => [(o as any).row.id, (o as any).duplicate])).toEqual([
    // A decision names a row even when it turns out a duplicate; the window ends strictly a day later.
    ['cnv_1', false],
    ['cnv_1', true],
    ['cnv_3', false],
    ['cnv_1', true],
    ['cnv_5', false],
    ['cnv_5', true],
  ])
  expect((onPg[4] as any).row).toMatchObject({ value: 19.99, currency: 'EUR', metadata: buy.metadata })

  const liteRows = e.sqlite.db.select().from(liteTables.conversions).orderBy(liteTables.conversions.id).all()
  const pgRows = await e.pg.select().from(pgTables.conversions).orderBy(pgTables.conversions.id)
  expect(pgRows).toEqual(liteRows)
  expect(pgRows.length).toBe(3)

  const events = (rows: { type: string; workspaceId: string; mode: string; data: unknown; createdAt: number }[]) =>
    rows.map(({ type, workspaceId, mode, data, createdAt }) => ({ type, workspaceId, mode, data, createdAt }))
  const liteEvents = events(e.sqlite.db.select().from(liteTables.outbox).orderBy(liteTables.outbox.seq).all())
  expect(events(await e.pg.select().from(pgTables.outbox).orderBy(pgTables.outbox.seq))).toEqual(liteEvents)
  expect(liteEvents.map((v) => v.createdAt)).toEqual([T0 + 1, T0 + 3, T0 + DAY + 2])
})

test('a refusal or a failure after the decision leaves nothing behind', async () => {
  const before = await e.sql`SELECT (SELECT count(*) FROM conversions)::int AS c, (SELECT count(*) FROM outbox)::int AS o`
  const failing = () => ({
    row: { id: 'cnv_x', clickId: 'clk_ok', linkId: 'lnk_on', workspaceId: 'ws_1', eventName: 'x', fingerprint: 'fx', createdAt: T0 },
    event: () => ({ type: 'no.such.event', workspaceId: 'ws_1', mode: 'live' as const, data: {} }),
  })
  await expect(pg.record('clk_ok', 'fx', T0 - DAY, failing, T0)).rejects.toThrow('unknown event type')
  expect(await e.sql`SELECT (SELECT count(*) FROM conversions)::int AS c, (SELECT count(*) FROM outbox)::int AS o`).toEqual(before)
})

test('identical beacons at once from separate connections: one conversion, one event, the rest answer it as duplicates', async () => {
  const rounds = 6
  const perRound = 8
  for (let round = 0; round < rounds; round++) {
    const fingerprint = `race_${round}`
    // Distinct ids per attempt: a second insert would not be stopped by the primary key.
    const outcomes = await Promise.all(
      Array.from({ length: perRound }, (_, i) =>
        pg.record(
          'clk_ok',
          fingerprint,
          T0 - DAY,
          decider(() => `cnv_${fingerprint}_${i}`, { eventName: 'race' }, fingerprint, T0 + 10 + i),
          T0 + 10 + i,
        ),
      ),
    )
    const accepted = outcomes.filter((o) => !(o instanceof ConversionRefused) && !o.duplicate)
    expect(accepted.length).toBe(1)
    const winner = (accepted[0] as { row: { id: string } }).row.id
    expect(outcomes.every((o) => !(o instanceof ConversionRefused) && o.row.id === winner)).toBe(true)
    const [stored] = await e.sql`SELECT count(*)::int AS n FROM conversions WHERE fingerprint = ${fingerprint}`
    expect(stored.n).toBe(1)
    const [published] = await e.sql`SELECT count(*)::int AS n FROM outbox WHERE data->'conversion'->>'fingerprint' = ${fingerprint}`
    expect(published.n).toBe(1)
  }
})
