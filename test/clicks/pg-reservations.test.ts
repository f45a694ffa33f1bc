// The atomic decision a click on a link under limits takes on PostgreSQL (clicks/repo.ts reserveClick),
// called concurrently on separate connections as several nodes would: clickLimit and uniqueIpLimit stop exactly
// at their limits, an admitted address stays admitted, and the flush of reserved clicks adds neither their
// total_clicks nor their address again, while still storing the click and its unique visitor.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import * as pgs from '../../src/db/pg/schema.generated'
import type { Enricher } from '../../src/modules/analytics/enrich'
import { pgEngine } from '../../src/db/engine/pg'
import type { ClickRecord } from '../../src/modules/clicks/port'
import { createClicksRepo } from '../../src/modules/clicks/repo'
import { openEngines, type Engines } from '../setup/engines'

const T0 = 1_800_000_000_000
const enricher: Enricher = { enrich: () => ({ country: null, city: null, device: 'desktop', browser: null, os: null }) }
let engines: Engines
let repo: ReturnType<typeof createClicksRepo>

beforeAll(async () => {
  engines = await openEngines()
  repo = createClicksRepo(pgEngine(engines.pg), Buffer.alloc(32, 3), enricher, 'https://lnk.test')
  await engines.pg.insert(pgs.workspaces).values({ id: 'ws_1', slug: 'ws-1', name: 'ws', createdAt: T0 })
})
afterAll(async () => {
  await engines?.close()
})

let made = 0
async function link(limits: { clickLimit?: number; uniqueIpLimit?: number }) {
  const id = `lnk_r${++made}`
  await engines.pg.insert(pgs.links).values({
    id,
    workspaceId: 'ws_1',
    domain: 'lnk.test',
    slug: id,
    destinationUrl: 'https://example.com/',
    tags: [],
    redirectStatus: 302,
    publicStatsEnabled: false,
    deepLinkEnabled: false,
    captchaEnabled: false,
    consentRequired: false,
    conversionTracking: false,
    isActive: true,
    isArchived: false,
    isTest: false,
    totalClicks: 0,
    uniqueClicks: 0,
    searchText: id,
    createdAt: T0,
    updatedAt: T0,
    clickLimit: limits.clickLimit ?? null,
    uniqueIpLimit: limits.uniqueIpLimit ?? null,
  })
  return id
}

async function stored(id: string) {
  const [row] =
    await engines.sql`SELECT total_clicks::int AS total, unique_clicks::int AS uniq, (SELECT count(*)::int FROM link_addresses WHERE link_id = ${id}) AS addresses FROM links WHERE id = ${id}`
  return row as { total: number; uniq: number; addresses: number }
}

const tally = (verdicts: string[]) => {
  const counts: Record<string, number> = {}
  for (const v of verdicts) counts[v] = (counts[v] ?? 0) + 1
  return counts
}

test('clickLimit: 40 concurrent reservations, exactly 10 accepted and counted', async () => {
  const id = await link({ clickLimit: 10 })
  const verdicts = await Promise.all(Array.from({ length: 40 }, () => repo.reserveClick(id, null, T0)))
  expect(tally(verdicts)).toEqual({ ok: 10, clickLimit: 30 })
  expect(await stored(id)).toEqual({ total: 10, uniq: 0, addresses: 0 })
})

test('uniqueIpLimit: 20 addresses at once, exactly 3 admitted; an admitted one comes back, a new one does not', async () => {
  const id = await link({ uniqueIpLimit: 3 })
  const addresses = Array.from({ length: 20 }, (_, i) => `addr_${i}`)
  const verdicts = await Promise.all(addresses.map((a) => repo.reserveClick(id, a, T0)))
  expect(tally(verdicts)).toEqual({ ok: 3, uniqueIpLimit: 17 })
  expect(await stored(id)).toEqual({ total: 3, uniq: 0, addresses: 3 })
  const admitted = addresses.find((_, i) => verdicts[i] === 'ok')!
  expect(await repo.reserveClick(id, admitted, T0)).toBe('ok')
  expect(await repo.reserveClick(id, 'addr_new', T0)).toBe('uniqueIpLimit')
  expect(await stored(id)).toEqual({ total: 4, uniq: 0, addresses: 3 })
})

test('both limits: the click limit is checked first and a refused address adds no click', async () => {
  const id = await link({ clickLimit: 2, uniqueIpLimit: 1 })
  expect(await repo.reserveClick(id, 'a', T0)).toBe('ok')
  expect(await repo.reserveClick(id, 'b', T0)).toBe('uniqueIpLimit')
  expect(await repo.reserveClick(id, 'a', T0)).toBe('ok')
  expect(await repo.reserveClick(id, 'a', T0)).toBe('clickLimit')
  expect(await stored(id)).toEqual({ total: 2, uniq: 0, addresses: 1 })
})

test('a link that is gone refuses', async () => {
  expect(await repo.reserveClick('lnk_nothing', null, T0)).toBe('clickLimit')
  expect(await repo.reserveClick('lnk_nothing', 'a', T0)).toBe('clickLimit')
})

test('the flush stores reserved clicks and their visitors, but adds neither total_clicks nor addresses again', async () => {
  const id = await link({ uniqueIpLimit: 5 })
  expect(await repo.reserveClick(id, 'addr_x', T0)).toBe('ok')
  expect(await repo.reserveClick(id, 'addr_y', T0)).toBe('ok')
  const click = (n: number, ip: string, newAddress: string | null, counted: boolean): ClickRecord => ({
    id: `clk_r${n}`,
    linkId: id,
    workspaceId: 'ws_1',
    clickedAt: T0 + n,
    ip,
    userAgent: 'Mozilla/5.0 test',
    referrer: null,
    referrerHost: null,
    ruleId: null,
    variantId: null,
    destinationUrl: 'https://example.com/',
    newAddress,
    isBot: false,
    announce: false,
    counted,
  })
  // Two reserved clicks, and one counted the plain way (as a click from before the link had its limit).
  await repo.writeBatch(
    { clicks: [click(1, '203.0.113.1', 'addr_x', true), click(2, '203.0.113.2', 'addr_y', true), click(3, '203.0.113.3', 'addr_z', false)], counts: [] },
    T0 + 10,
  )
  expect(await stored(id)).toEqual({ total: 3, uniq: 3, addresses: 3 })
  const [{ n }] = await engines.sql`SELECT count(*)::int AS n FROM clicks WHERE link_id = ${id}`
  expect(n).toBe(3)
})
