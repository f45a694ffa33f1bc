// The change feed on a real PostgreSQL (src/db/pg/notify.ts): a change published in a committed transaction
// reaches a listener on another connection, a rolled-back one never does, an over-long one arrives as a
// reset; when the listener's backend is killed, the listener reconnects, asks for a reset once every
// channel is back, and later changes arrive again.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { SQL } from 'bun'
import { openPostgres } from '../../src/db/pg/connect'
import { LISTEN_APPLICATION_NAME, listenChanges, MAX_PAYLOAD_BYTES, publishChange, type ChangeHandlers, type ResetCause } from '../../src/db/pg/notify'
import { createTestDatabase, type TestDatabase } from '../setup/postgres'

let pg: TestDatabase
let sql: SQL

beforeAll(async () => {
  pg = await createTestDatabase()
  sql = await openPostgres(pg.url, { max: 2 })
})

afterAll(async () => {
  await sql?.close()
  await pg?.drop()
})

/** Polls `done` up to ~15 s (the client's reconnect backoff starts at 250 ms): bounded, never timed. */
async function until(done: () => boolean | Promise<boolean>) {
  for (let i = 0; i < 300 && !(await done()); i++) await Bun.sleep(50)
  return done()
}

function recorder() {
  const changes: [string, string][] = []
  const resets: ResetCause[] = []
  const handlers: ChangeHandlers = { onChange: (channel, payload) => changes.push([channel, payload]), onReset: (cause) => resets.push(cause) }
  return { changes, resets, handlers }
}

const commit = (channel: string, payload: string) => sql.begin((tx) => publishChange(tx, channel, payload))

describe('publishing', () => {
  test('a change committed on one connection reaches a listener on another; a rolled-back one never does', async () => {
    const r = recorder()
    const listener = await listenChanges(pg.url, ['lnk_links', 'lnk_domains'], r.handlers)
    try {
      await sql
        .begin(async (tx) => {
          await publishChange(tx, 'lnk_links', 'rolled-back')
          throw new Error('roll back')
        })
        .catch(() => {})
      await commit('lnk_links', 'lnk_1')
      await commit('lnk_other', 'not listened to')
      await commit('lnk_domains', 'go.example.com')
      // Notices arrive in commit order: a rolled-back one sent at all would be in front of these.
      expect(await until(() => r.changes.length >= 2)).toBe(true)
      expect(r.changes).toEqual([
        ['lnk_links', 'lnk_1'],
        ['lnk_domains', 'go.example.com'],
      ])
      expect(r.resets).toEqual([])
    } finally {
      await listener.close()
    }
  })

  test('a payload too long for PostgreSQL is sent as the reset notice instead of failing the writer’s transaction', async () => {
    const r = recorder()
    const listener = await listenChanges(pg.url, ['lnk_links'], r.handlers)
    try {
      const longest = 'é'.repeat(MAX_PAYLOAD_BYTES >> 1) + 'x'
      expect(Buffer.byteLength(longest)).toBe(MAX_PAYLOAD_BYTES)
      await commit('lnk_links', longest)
      await commit('lnk_links', longest + 'x')
      await commit('lnk_links', 'after')
      expect(await until(() => r.changes.some(([, p]) => p === 'after'))).toBe(true)
      expect(r.changes).toEqual([
        ['lnk_links', longest],
        ['lnk_links', 'after'],
      ])
      expect(r.resets).toEqual(['notice'])
    } finally {
      await listener.close()
    }
  })

  test('channel names PostgreSQL would refuse are refused before the transaction is spoiled', async () => {
    await expect(sql.begin((tx) => publishChange(tx, 'c'.repeat(64), 'x'))).rejects.toThrow('1 to 63 bytes')
    await expect(listenChanges(pg.url, [''], recorder().handlers)).rejects.toThrow('1 to 63 bytes')
  })
})

describe('the listen connection', () => {
  test('killed from another connection: it reconnects, asks for one reset, and later changes arrive again', async () => {
    const r = recorder()
    const listener = await listenChanges(pg.url, ['lnk_links', 'lnk_keys'], r.handlers)
    try {
      await commit('lnk_links', 'before')
      expect(await until(() => r.changes.length === 1)).toBe(true)
      const killed = await sql`
        SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = ${LISTEN_APPLICATION_NAME}`
      expect(killed.map((k: { done: boolean }) => k.done)).toEqual([true])
      expect(await until(() => r.resets.length > 0)).toBe(true)
      expect(r.resets).toEqual(['reconnected'])
      // The reset came once both channels were subscribed again.
      await commit('lnk_links', 'after')
      await commit('lnk_keys', 'key_1')
      expect(await until(() => r.changes.length === 3)).toBe(true)
      expect(r.changes).toEqual([
        ['lnk_links', 'before'],
        ['lnk_links', 'after'],
        ['lnk_keys', 'key_1'],
      ])
      expect(r.resets).toEqual(['reconnected'])
    } finally {
      await listener.close()
    }
    // close() ends the listener's own connection.
    const listeners = async () =>
      (await sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = ${LISTEN_APPLICATION_NAME}`)[0].n
    expect(await until(async () => (await listeners()) === 0)).toBe(true)
  })

  test('listeners sharing a client share its one listen connection; close() leaves the client open', async () => {
    const client = await openPostgres(pg.url, { max: 1 })
    try {
      const a = recorder()
      const b = recorder()
      const first = await listenChanges(client, ['lnk_links'], a.handlers)
      const second = await listenChanges(client, ['lnk_jobs'], b.handlers)
      const listening = await sql`SELECT count(DISTINCT pid)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'`
      expect(listening[0].n).toBe(1)
      await commit('lnk_links', 'l')
      await commit('lnk_jobs', 'j')
      expect(await until(() => a.changes.length + b.changes.length === 2)).toBe(true)
      expect([a.changes, b.changes]).toEqual([[['lnk_links', 'l']], [['lnk_jobs', 'j']]])
      await first.close()
      await second.close()
      expect((await client`SELECT 1 AS one`)[0].one).toBe(1)
    } finally {
      await client.close()
    }
  })
})
