// The click writer thread: batches written on its own connection, and the fallback when it fails.
import { afterAll, expect, test } from 'bun:test'
import { silentLogger } from '../../src/platform/log'
import { createEnricher } from '../../src/modules/analytics/enrich'
import type { ClickBatch, ClickRecord } from '../../src/modules/clicks/port'
import { createClickFlush } from '../../src/modules/clicks/repo-sqlite'
import { inlineClickWriter, threadClickWriter, type ClickWriter } from '../../src/modules/clicks/click-writer'
import { bootstrapAccount, ON_PG, rawRows, setup, storedEvents } from '../helpers'

const env = await setup()
afterAll(() => env.cleanup())

async function linkId() {
  const acct = await bootstrapAccount(env.rt)
  const res = await env.request('/v1/links', { method: 'POST', key: acct.apiKey.key, json: { destinationUrl: 'https://example.com/' } })
  const link = ((await res.json()) as { data: unknown }).data as { id: string; slug: string; domain: string; shortUrl: string; destinationUrl: string }
  return { ...link, workspaceId: acct.workspace.id }
}

/** Where a routed click went (a rule's or a variant's destination); unrouted clicks go to the link's own. */
type Routed = Pick<ClickRecord, 'ruleId' | 'variantId' | 'destinationUrl'>
const UNROUTED: Routed = { ruleId: null, variantId: null, destinationUrl: 'https://example.com/' }

function records(link: { id: string }, workspaceId: string, n: number, ip = '203.0.113.7', route: Routed = UNROUTED): ClickBatch {
  const clicks: ClickRecord[] = Array.from({ length: n }, (_, i) => ({
    id: `clk_${crypto.randomUUID()}`,
    linkId: link.id,
    workspaceId,
    clickedAt: 1_800_000_000_000 + i,
    ip,
    userAgent: 'Mozilla/5.0 test',
    referrer: null,
    referrerHost: null,
    ...route,
    newAddress: null,
    isBot: false,
    announce: true,
  }))
  return { clicks, counts: [] }
}

/** Storage itself, for what no port shows (the stored hashes): raw on purpose. */
const count = (sql: string, ...args: string[]) => (env.rt.db.sqlite.query(sql).get(...args) as { n: number }).n

/** Clicks stored for the link, read as analytics reads them. */
const clicksStored = async (workspaceId: string, linkId: string) =>
  (await env.rt.modules.analytics.ctx.analytics.rawClicks({ workspaceId, test: false, linkId }, 0, Number.MAX_SAFE_INTEGER)).length

async function counters(workspaceId: string, linkId: string) {
  const row = await env.rt.modules.links.repo.findById(workspaceId, linkId)
  return { t: row?.totalClicks, u: row?.uniqueClicks }
}

const clickedEvents = async (linkId: string) =>
  (await storedEvents(env)).filter((e) => e.type === 'link.clicked' && (e.data.link as { id: string }).id === linkId).length

/** Storage itself: each stored click's rule and variant, and its event's click part, by click id. */
async function routesStored(linkId: string) {
  const rows = await rawRows<{ id: string; rule_id: string | null; variant_id: string | null }>(
    env,
    'SELECT id, rule_id, variant_id FROM clicks WHERE link_id = ?',
    linkId,
  )
  const events = (await storedEvents(env)).filter((e) => e.type === 'link.clicked' && (e.data.link as { id: string }).id === linkId)
  const clicks = new Map(events.map((e) => [(e.data.click as { id: string }).id, e.data.click as Routed & { id: string }]))
  return rows.map((r) => {
    const c = clicks.get(r.id)
    return { rule: r.rule_id, variant: r.variant_id, event: c && { ruleId: c.ruleId, variantId: c.variantId, destinationUrl: c.destinationUrl } }
  })
}

const RULED: Routed = { ruleId: 'rr_writer_rule', variantId: null, destinationUrl: 'https://example.org/by-rule' }
const VARIED: Routed = { ruleId: null, variantId: 'var_writer_b', destinationUrl: 'https://example.net/variant-b' }

/** How many stored clicks carry the route, their events naming it the same way. */
const routedCount = (stored: Awaited<ReturnType<typeof routesStored>>, r: Routed) =>
  stored.filter(
    (s) =>
      s.rule === r.ruleId &&
      s.variant === r.variantId &&
      s.event?.ruleId === r.ruleId &&
      s.event.variantId === r.variantId &&
      s.event.destinationUrl === r.destinationUrl,
  ).length

// SQLite's writer thread and its connection: SQLite storage itself (PostgreSQL flushes inline, as in the last test).
test.skipIf(ON_PG)('the thread writes each batch on its own connection, counters and events included', async () => {
  const link = await linkId()
  const ws = link.workspaceId
  const writer = threadClickWriter(env.rt.db.path, env.rt.modules.clicks.visitorKey, inlineClickWriter(env.rt.modules.clicks.repo), silentLogger, {
    baseUrl: env.rt.config.baseUrl,
  })
  await writer.write(records(link, ws, 300), Date.now())
  await writer.write(records(link, ws, 150, '198.51.100.9', RULED), Date.now())
  await writer.write(records(link, ws, 50, '198.51.100.9', VARIED), Date.now())
  await writer.close()
  // A second close (the buffer stopped, then the runtime closed) answers at once.
  await writer.close()
  expect(await clicksStored(ws, link.id)).toBe(500)
  expect(await counters(ws, link.id)).toEqual({ t: 500, u: 2 })
  expect(await clickedEvents(link.id)).toBe(500)
  // The route crossed to the thread with each click: stored in the clicks table, named in link.clicked.
  const stored = await routesStored(link.id)
  expect([routedCount(stored, UNROUTED), routedCount(stored, RULED), routedCount(stored, VARIED)]).toEqual([300, 150, 50])
  // The address is hashed, never stored.
  expect(count('SELECT count(*) AS n FROM clicks WHERE visitor_hash LIKE ?', '%203.0.113.7%')).toBe(0)
})

test('a writer thread that cannot write falls back to the calling thread: no click is lost', async () => {
  const link = await linkId()
  const ws = link.workspaceId
  const writes: number[] = []
  const fallback: ClickWriter = {
    write: async (batch, now) => {
      writes.push(batch.clicks.length)
      await env.rt.modules.clicks.repo.writeBatch(batch, now)
    },
    close: async () => {},
  }
  // A database path the thread cannot open makes it fail.
  const writer = threadClickWriter('/nonexistent-dir/lnk.db', env.rt.modules.clicks.visitorKey, fallback, silentLogger, { baseUrl: env.rt.config.baseUrl })
  let firstError: unknown = null
  try {
    await writer.write(records(link, ws, 10), Date.now())
  } catch (err) {
    firstError = err
  }
  // Whatever the first write did, from now on batches go through the fallback and land.
  await Bun.sleep(200)
  await writer.write(records(link, ws, 5, '192.0.2.1'), Date.now())
  await writer.close()
  expect(writes).toContain(5)
  expect(await clicksStored(ws, link.id)).toBe(firstError ? 5 : 15)
})

test('the same repo writes inline when used directly, each click’s rule and variant included', async () => {
  const link = await linkId()
  const ws = link.workspaceId
  // PostgreSQL has no writer thread: the module's repo is the one its flush writes through.
  const { store } = env.rt
  const repo =
    store.engine === 'sqlite'
      ? createClickFlush(store.db.db, env.rt.modules.clicks.visitorKey, createEnricher(), env.rt.config.baseUrl)
      : env.rt.modules.clicks.repo
  await inlineClickWriter(repo).write(records(link, ws, 3), Date.now())
  await inlineClickWriter(repo).write(records(link, ws, 2, '192.0.2.44', RULED), Date.now())
  await inlineClickWriter(repo).write(records(link, ws, 4, '192.0.2.45', VARIED), Date.now())
  expect(await clicksStored(ws, link.id)).toBe(9)
  const stored = await routesStored(link.id)
  expect([routedCount(stored, UNROUTED), routedCount(stored, RULED), routedCount(stored, VARIED)]).toEqual([3, 2, 4])
})

// Stored visitor hashes decide unique counts across versions: the hash must stay byte for byte what
// earlier versions (node:crypto's HMAC) stored, or every returning visitor would count as new once.
test('visitor hashes are the keyed HMAC-SHA256 earlier versions stored', async () => {
  const { createHmac } = await import('node:crypto')
  const { visitorHash } = await import('../../src/modules/clicks/visitor')
  const key = Buffer.from('lnk-test-visitor-key-0123456789ab')
  expect(visitorHash(key, '203.0.113.7', 'Mozilla/5.0 test')).toBe('hOh3jZcLrQzmHeDZI1N_BQtJYE_4CUZF')
  for (const [ip, ua] of [
    ['2001:db8::1', null],
    ['198.51.100.2', 'Agent ünïcode ✓'],
    ['::ffff:192.0.2.1', ''],
  ] as const) {
    expect(visitorHash(key, ip, ua)).toBe(
      createHmac('sha256', key)
        .update(`v|${ip}|${ua ?? ''}`)
        .digest('base64url')
        .slice(0, 32),
    )
  }
})
