// Where automations' samples come from, the one repo on both engines (issue 18): the same deliveries and
// outbox rows in a SQLite file and a PostgreSQL database give the same envelopes, newest first where the port
// says so.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import * as pgTables from '../../src/db/pg/schema.generated'
import * as liteTables from '../../src/db/schema'
import { pgEngine } from '../../src/db/engine/pg'
import { sqliteEngine } from '../../src/db/engine/sqlite'
import { SAMPLE_SCAN_WINDOW, type SamplesRepo } from '../../src/modules/automations/port-samples'
import { createSamplesRepo } from '../../src/modules/automations/repo-samples'
import { openEngines, type Engines } from '../setup/engines'

const T0 = 1_700_000_000_000

let e: Engines
let lite: SamplesRepo
let pg: SamplesRepo

/** The same rows in both databases (the generated tables carry the SQLite property names). */
async function seed(table: 'workspaces' | 'webhookEndpoints' | 'webhookDeliveries' | 'outbox', rows: Record<string, unknown>[]) {
  e.sqlite.db
    .insert(liteTables[table] as any)
    .values(rows)
    .run()
  await e.pg.insert(pgTables[table] as any).values(rows)
}

const endpoint = (id: string, workspaceId: string, mode: 'live' | 'test', kind: 'endpoint' | 'rest_hook' = 'endpoint') => ({
  id,
  workspaceId,
  url: `https://hook.test/${id}`,
  events: ['*'],
  format: 'standard',
  mode,
  isActive: true,
  failureCount: 0,
  customHeaders: {},
  batchEnabled: false,
  batchWindowSeconds: 0,
  maxConcurrent: 1,
  mtlsEnabled: false,
  secret: 's',
  createdAt: T0,
  updatedAt: T0,
  kind,
})

let deliveryN = 0
const delivery = (endpointId: string, workspaceId: string, event: string, eventId: string | null, createdAt: number, extra: Record<string, unknown> = {}) => ({
  id: `del_${++deliveryN}`,
  endpointId,
  workspaceId,
  event,
  eventId,
  payload: eventId && { id: eventId, type: event, data: { at: createdAt, tags: ['a'] } },
  status: 'success',
  attempt: 1,
  maxAttempts: 5,
  batchSize: 1,
  batchOpen: false,
  replayable: true,
  isPing: false,
  idempotencyKey: `idem_${deliveryN}`,
  createdAt,
  updatedAt: createdAt,
  ...extra,
})

const byId = (rows: Record<string, unknown>[]) => [...rows].sort((a, b) => String(a.id).localeCompare(String(b.id)))

beforeAll(async () => {
  e = await openEngines()
  lite = createSamplesRepo(sqliteEngine(e.sqlite.db))
  pg = createSamplesRepo(pgEngine(e.pg))
  await seed('workspaces', [
    { id: 'ws_1', slug: 'one', name: 'One', createdAt: T0 },
    { id: 'ws_2', slug: 'two', name: 'Two', createdAt: T0 },
  ])
  await seed('webhookEndpoints', [
    endpoint('ep_1', 'ws_1', 'live'),
    endpoint('ep_2', 'ws_1', 'live', 'rest_hook'),
    endpoint('ep_3', 'ws_1', 'test'),
    endpoint('ep_4', 'ws_2', 'live'),
  ])
  const rows = []
  // ep_1: twelve link.created events (one of them replayed), newest last, among other events and rows a
  // sample never uses: an open batch, a delivery without payload.
  for (let i = 0; i < 12; i++) rows.push(delivery('ep_1', 'ws_1', 'link.created', `evt_${i}`, T0 + i * 10))
  rows.push(delivery('ep_1', 'ws_1', 'link.created', 'evt_11', T0 + 200, { replayOfId: 'del_12' }))
  rows.push(delivery('ep_1', 'ws_1', 'link.created', 'evt_open', T0 + 300, { batchOpen: true }))
  rows.push(delivery('ep_1', 'ws_1', 'link.created', null, T0 + 301))
  rows.push(delivery('ep_1', 'ws_1', 'link.clicked', 'evt_click', T0 + 302))
  // Same time, different deliveries: ids decide which is newer.
  rows.push(delivery('ep_2', 'ws_1', 'link.created', 'evt_hook_a', T0 + 50), delivery('ep_2', 'ws_1', 'link.created', 'evt_hook_b', T0 + 50))
  rows.push(delivery('ep_2', 'ws_1', 'webhook.test', 'evt_ping', T0 + 60, { isPing: true }))
  rows.push(delivery('ep_3', 'ws_1', 'link.created', 'evt_test_mode', T0 + 70))
  rows.push(delivery('ep_4', 'ws_2', 'link.created', 'evt_other_ws', T0 + 80))
  await seed('webhookDeliveries', rows)
  const events = []
  for (let seq = 1; seq <= 12; seq++) {
    const [workspaceId, mode, type] =
      seq % 4 === 0
        ? ['ws_2', 'live', 'link.created']
        : seq % 5 === 0
          ? ['ws_1', 'test', 'link.created']
          : seq % 3 === 0
            ? ['ws_1', 'live', 'link.deleted']
            : ['ws_1', 'live', 'link.created']
    events.push({ seq, id: `evt_o${seq}`, type, mode, workspaceId, data: { seq, link: { id: `lnk_${seq}` } }, createdAt: T0 + seq })
  }
  await seed('outbox', events)
})

afterAll(async () => {
  await e?.close()
})

test('delivered envelopes: the same set on both engines, the newest of each endpoint, deduped by event', async () => {
  for (const [ws, mode, type, limit] of [
    ['ws_1', 'live', 'link.created', 2],
    ['ws_1', 'live', 'link.created', 10],
    ['ws_1', 'test', 'link.created', 5],
    ['ws_1', 'live', 'webhook.test', 5],
    ['ws_2', 'live', 'link.created', 1],
    ['ws_1', 'live', 'link.updated', 5],
  ] as const) {
    const onLite = byId(await lite.deliveredEnvelopes(ws, mode, type, limit))
    expect(byId(await pg.deliveredEnvelopes(ws, mode, type, limit))).toEqual(onLite)
  }
  // limit 2 reads 8 deliveries of ep_1: its newest (the replay of evt_11, then evt_11 .. evt_5), and both of ep_2's.
  const ids = byId(await pg.deliveredEnvelopes('ws_1', 'live', 'link.created', 2)).map((p) => p.id)
  expect(ids).toEqual(['evt_10', 'evt_11', 'evt_5', 'evt_6', 'evt_7', 'evt_8', 'evt_9', 'evt_hook_a', 'evt_hook_b'])
  expect(await pg.deliveredEnvelopes('ws_1', 'live', 'webhook.test', 5)).toEqual([{ id: 'evt_ping', type: 'webhook.test', data: { at: T0 + 60, tags: ['a'] } }])
})

test('recent events: the same envelopes, newest first, on both engines', async () => {
  for (const [ws, mode, type, limit] of [
    ['ws_1', 'live', 'link.created', 3],
    ['ws_1', 'live', 'link.created', 50],
    ['ws_1', 'test', 'link.created', 5],
    ['ws_2', 'live', 'link.created', 5],
    ['ws_1', 'live', 'link.updated', 5],
  ] as const) {
    expect(await pg.recentEvents(ws, mode, type, limit)).toEqual(await lite.recentEvents(ws, mode, type, limit))
  }
  const newest = await pg.recentEvents('ws_1', 'live', 'link.created', 3)
  expect(newest.map((v) => v.id)).toEqual(['evt_o11', 'evt_o7', 'evt_o2'])
  expect(newest[0]).toEqual({
    id: 'evt_o11',
    type: 'link.created',
    timestamp: new Date(T0 + 11).toISOString(),
    mode: 'live',
    data: { seq: 11, link: { id: 'lnk_11' } },
  })
})

test('both reads look no further back than the newest SAMPLE_SCAN_WINDOW rows', async () => {
  await seed('workspaces', [{ id: 'ws_3', slug: 'three', name: 'Three', createdAt: T0 }])
  await seed('webhookEndpoints', [endpoint('ep_5', 'ws_3', 'live')])
  await seed('webhookDeliveries', [delivery('ep_5', 'ws_3', 'link.deleted', 'evt_rare', T0 - 1)])
  await seed('outbox', [{ seq: 100, id: 'evt_rare_o', type: 'link.deleted', mode: 'live', workspaceId: 'ws_3', data: {}, createdAt: T0 }])
  const before = { delivered: await pg.deliveredEnvelopes('ws_3', 'live', 'link.deleted', 5), recent: await pg.recentEvents('ws_3', 'live', 'link.deleted', 5) }
  expect([before.delivered.length, before.recent.length]).toEqual([1, 1])
  // A window's worth of newer rows, generated in the database (row by row from here takes seconds).
  const n = SAMPLE_SCAN_WINDOW
  e.sqlite.sqlite.run(`INSERT INTO webhook_deliveries (id, endpoint_id, workspace_id, event, event_id, payload, status, attempt, max_attempts, batch_size, batch_open, replayable, is_ping, idempotency_key, created_at, updated_at)
    WITH RECURSIVE g(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM g WHERE i < ${n - 1})
    SELECT 'del_c' || i, 'ep_5', 'ws_3', 'link.clicked', 'evt_c' || i, '{}', 'success', 1, 5, 1, 0, 1, 0, 'idem_c' || i, ${T0} + i, ${T0} + i FROM g`)
  e.sqlite.sqlite.run(`INSERT INTO outbox (seq, id, type, mode, workspace_id, data, created_at)
    WITH RECURSIVE g(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM g WHERE i < ${n - 1})
    SELECT 101 + i, 'evt_oc' || i, 'link.clicked', 'live', 'ws_3', '{}', ${T0} FROM g`)
  await e.sql`INSERT INTO webhook_deliveries (id, endpoint_id, workspace_id, event, event_id, payload, status, attempt, max_attempts, batch_size, batch_open, replayable, is_ping, idempotency_key, created_at, updated_at)
    SELECT 'del_c' || i, 'ep_5', 'ws_3', 'link.clicked', 'evt_c' || i, '{}'::jsonb, 'success', 1, 5, 1, false, true, false, 'idem_c' || i, ${T0} + i, ${T0} + i FROM generate_series(0, ${n - 1}) i`
  await e.sql`INSERT INTO outbox (seq, id, type, mode, workspace_id, data, created_at)
    SELECT 101 + i, 'evt_oc' || i, 'link.clicked', 'live', 'ws_3', '{}'::jsonb, ${T0} FROM generate_series(0, ${n - 1}) i`
  for (const repo of [lite, pg]) {
    expect(await repo.deliveredEnvelopes('ws_3', 'live', 'link.deleted', 5)).toEqual([])
    expect(await repo.recentEvents('ws_3', 'live', 'link.deleted', 5)).toEqual([])
    expect((await repo.recentEvents('ws_3', 'live', 'link.clicked', 2)).map((v) => v.id)).toEqual([
      `evt_oc${SAMPLE_SCAN_WINDOW - 1}`,
      `evt_oc${SAMPLE_SCAN_WINDOW - 2}`,
    ])
  }
}, 30_000)
