// The click buffer when the writer falls behind: a cap on the clicks kept in full, past it clicks kept as
// counts per link and hour (exact totals, no detail), addresses a uniqueIpLimit admits never shed, the shed
// counted in /metrics and logged when shedding starts and stops; chunked writes; a failed write retried.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ClickBuffer } from '../../src/modules/clicks/click-buffer'
import type { ClickWriter } from '../../src/modules/clicks/click-writer'
import type { ClickBatch, ClickRecord } from '../../src/modules/clicks/port'
import { createLogger } from '../../src/platform/log'
import { systemClock } from '../../src/platform/clock'
import type { TestEnv } from '../helpers'
import { account, counters, redirectEnv, sql, type Api } from './_redirect'

let env: TestEnv
let api: Api
beforeAll(async () => {
  env = await redirectEnv()
  api = await account(env)
})
afterAll(() => env.cleanup())

let n = 0
function click(linkId: string, workspaceId: string, o: Partial<ClickRecord> = {}): ClickRecord {
  n++
  return {
    id: `clk_buffer${String(n).padStart(12, '0')}`,
    linkId,
    workspaceId,
    clickedAt: Date.now(),
    ip: `198.51.100.${n % 250}`,
    userAgent: 'Mozilla/5.0 test',
    referrer: null,
    referrerHost: null,
    ruleId: null,
    variantId: null,
    destinationUrl: 'https://example.com/',
    newAddress: null,
    isBot: false,
    announce: false,
    ...o,
  }
}

/** The runtime's own repo behind a gate the test opens, recording what each write carried. */
function gatedWriter() {
  let open: () => void = () => {}
  let gate = new Promise<void>((resolve) => (open = resolve))
  const writes: { clicks: number; counts: number }[] = []
  const writer: ClickWriter = {
    async write(batch: ClickBatch, now: number) {
      await gate
      writes.push({ clicks: batch.clicks.length, counts: batch.counts.reduce((s, c) => s + c.clicks + c.bots, 0) })
      await env.rt.modules.clicks.repo.writeBatch(batch, now)
    },
    close: async () => {},
  }
  return {
    writer,
    writes,
    release: () => open(),
    hold: () => (gate = new Promise<void>((resolve) => (open = resolve))),
  }
}

test('past maxQueued clicks are kept as counts: totals exact, detail shed and counted, addresses never shed', async () => {
  const link = await api.make({ destinationUrl: 'https://example.com/overload', uniqueIpLimit: 100 })
  const lines: string[] = []
  const gated = gatedWriter()
  const buffer = new ClickBuffer(
    gated.writer,
    systemClock,
    createLogger('warn', (line) => lines.push(line)),
    () => false,
    { intervalMs: 1000, flushAt: 1e9, chunk: 4, maxQueued: 10 },
  )
  for (let i = 0; i < 6; i++) buffer.add(click(link.id, api.workspaceId))
  // The first flush takes these six and waits at the gate: the writer has them, but they still hold memory
  // and count toward the cap until it confirms them.
  const first = buffer.flush()
  for (let i = 0; i < 4; i++) buffer.add(click(link.id, api.workspaceId))
  // Full (six being written, four waiting): from here on counts only, except a click that admits an address.
  for (let i = 0; i < 25; i++) buffer.add(click(link.id, api.workspaceId, { isBot: i % 5 === 0 }))
  buffer.add(click(link.id, api.workspaceId, { newAddress: 'addr-hash-1' }))
  expect(buffer.shed).toBe(25)
  expect(buffer.size).toBe(4 + 1 + 25)
  // Not yet committed: those waiting and the six at the gate.
  expect(buffer.unwritten).toBe(6 + 4 + 1 + 25)
  // Limits read what is pending: every person's click, shed or not (bots are never counted).
  expect(buffer.pendingClicks(link.id)).toBe(6 + 4 + 20 + 1)
  expect(buffer.pendingAddresses(link.id)).toEqual(['addr-hash-1'])
  expect(lines.filter((l) => l.includes('counts only'))).toHaveLength(1)

  gated.release()
  await first
  await buffer.flush()
  expect(buffer.size).toBe(0)
  expect(buffer.unwritten).toBe(0)
  expect(buffer.pendingClicks(link.id)).toBe(0)
  // Chunks of at most four clicks; the counts travel with a chunk once.
  expect(gated.writes.every((w) => w.clicks <= 4)).toBe(true)
  expect(gated.writes.reduce((s, w) => s + w.counts, 0)).toBe(25)
  const stored = (
    await sql<{ n: number; bots: number }>(
      env,
      'SELECT count(*) AS n, coalesce(sum(CASE WHEN is_bot THEN 1 ELSE 0 END), 0) AS bots FROM clicks WHERE link_id = ?',
      link.id,
    )
  )[0]!
  expect(stored).toEqual({ n: 11, bots: 0 })
  // 31 people's clicks counted; only the 11 kept in full were unique visitors (distinct addresses).
  expect(await counters(env, link.id)).toEqual({ total_clicks: 31, unique_clicks: 11 })
  expect(await sql(env, 'SELECT ip_hash FROM link_addresses WHERE link_id = ?', link.id)).toEqual([{ ip_hash: 'addr-hash-1' }])

  // Room again: the next click is kept in full, and the end of the episode is logged with its count.
  buffer.add(click(link.id, api.workspaceId))
  expect(lines.filter((l) => l.includes('caught up') && l.includes('shed=25'))).toHaveLength(1)
  await buffer.flush()
})

test('a failed write keeps its chunk and the counts for the next flush; nothing is counted twice', async () => {
  const link = await api.make({ destinationUrl: 'https://example.com/retry' })
  let fail = true
  const writer: ClickWriter = {
    async write(batch, now) {
      if (fail) throw new Error('disk full')
      await env.rt.modules.clicks.repo.writeBatch(batch, now)
    },
    close: async () => {},
  }
  const buffer = new ClickBuffer(writer, systemClock, createLogger('silent'), () => false, { intervalMs: 1000, flushAt: 1e9, chunk: 3, maxQueued: 5 })
  for (let i = 0; i < 8; i++) buffer.add(click(link.id, api.workspaceId))
  await buffer.flush()
  expect(buffer.size).toBe(8)
  expect(buffer.unwritten).toBe(8)
  expect(buffer.pendingClicks(link.id)).toBe(8)
  fail = false
  await buffer.flush()
  expect(buffer.size).toBe(0)
  expect(await counters(env, link.id)).toEqual({ total_clicks: 8, unique_clicks: 5 })
})

test('/metrics exposes the clicks kept as counts only, and those not yet committed', async () => {
  const res = await env.request('/metrics')
  const text = await res.text()
  expect(text).toMatch(/# TYPE lnk_clicks_shed_total counter\nlnk_clicks_shed_total \d+/)
  expect(text).toMatch(/# TYPE lnk_clicks_unwritten gauge\nlnk_clicks_unwritten \d+/)
})
