// db/hot.ts: statements built with drizzle and run on the driver. These check storage itself (what is
// written, which index a statement uses), so they read SQLite directly.
import { afterAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { and, eq, sql } from 'drizzle-orm'
import { openDatabase } from '../../src/db/client'
import { hotStatement } from '../../src/db/hot'
import { migrate } from '../../src/db/migrate'
import { webhookBatchEvents, webhookDeliveries } from '../../src/db/schema'
import { tempDir } from '../helpers'

const dir = tempDir()
const handle = openDatabase(join(dir, 'lnk.db'))
migrate(handle.sqlite)
handle.sqlite.exec('PRAGMA foreign_keys = OFF')
const db = handle.db
afterAll(() => {
  handle.close()
  rmSync(dir, { recursive: true, force: true })
})

test('constants are written into the statement; placeholders are bound by name, encoded like their column', () => {
  const insert = hotStatement(
    db,
    db.insert(webhookDeliveries).values({
      id: sql.placeholder('id'),
      endpointId: 'ep_1',
      workspaceId: 'ws_1',
      event: 'link.clicked',
      payload: sql.placeholder('payload'),
      status: 'pending',
      attempt: 0,
      maxAttempts: 5,
      batchSize: 1,
      batchOpen: sql.placeholder('open'),
      replayable: true,
      isPing: false,
      idempotencyKey: sql.placeholder('id'),
      createdAt: 1,
      updatedAt: 1,
    }),
  )
  expect(insert.sql).toContain("'pending'")
  expect(insert.sql.match(/\?/g)).toHaveLength(4)
  expect(insert.run({ id: 'd_1', payload: { a: 1 }, open: true })).toBe(1)
  expect(insert.run({ id: 'd_2', open: false })).toBe(1)
  const rows = handle.sqlite.query('SELECT id, payload, batch_open, replayable, idempotency_key FROM webhook_deliveries ORDER BY id').all()
  expect(rows).toEqual([
    { id: 'd_1', payload: '{"a":1}', batch_open: 1, replayable: 1, idempotency_key: 'd_1' },
    { id: 'd_2', payload: null, batch_open: 0, replayable: 1, idempotency_key: 'd_2' },
  ])
})

test('a placeholder inside a sql fragment is bound as it comes; rows come back by column name', () => {
  const add = hotStatement(
    db,
    db.insert(webhookBatchEvents).values({ deliveryId: sql.placeholder('id'), position: 0, envelope: sql`${sql.placeholder('json')}` }),
  )
  add.run({ id: 'd_1', json: '{"already":"serialized"}' })
  const read = hotStatement(
    db,
    db
      .select({ envelope: webhookBatchEvents.envelope })
      .from(webhookBatchEvents)
      .where(eq(webhookBatchEvents.deliveryId, sql.placeholder('id'))),
  )
  expect(read.all({ id: 'd_1' })).toEqual([{ envelope: '{"already":"serialized"}' }])
  expect(read.get({ id: 'nope' })).toBeUndefined()
})

test('a boolean compared in a partial index condition keeps the index usable, and a LIMIT is written in', () => {
  const open = hotStatement(
    db,
    db
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.endpointId, sql.placeholder('endpointId')), eq(webhookDeliveries.batchOpen, true)))
      .limit(1),
  )
  expect(open.get({ endpointId: 'ep_1' })).toEqual({ id: 'd_1' })
  expect(open.sql).toMatch(/limit 1$/)
  const plan = handle.sqlite.prepare(`EXPLAIN QUERY PLAN ${open.sql}`).all('ep_1') as { detail: string }[]
  expect(plan.map((p) => p.detail).join('\n')).toContain('webhook_deliveries_open_batch_idx')
})
