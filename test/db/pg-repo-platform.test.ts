// The platform area's repos on both engines (repo-settings.ts, repo-idempotency.ts, and SQLite's synchronous
// secrets, repo-settings-sqlite.ts): the same script on each must answer the same. Then what several nodes do
// at once, on separate connections of the pool: a server secret created on first use by all of them (one
// secret for all), and one Idempotency-Key claimed by many requests, fresh or over an expired holder (exactly
// one wins).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { pgEngine } from '../../src/db/engine/pg'
import { sqliteEngine } from '../../src/db/engine/sqlite'
import type { IdempotencyRepo, NewIdempotencyRecord } from '../../src/modules/system/port-idempotency'
import { createIdempotencyRepo } from '../../src/modules/system/repo-idempotency'
import { createSettingsRepo, preloadSettings } from '../../src/modules/system/repo-settings'
import { createSettingsRepoSqlite } from '../../src/modules/system/repo-settings-sqlite'
import { createIdentityRepo } from '../../src/modules/identity/repo'
import { openEngines, type Engines } from '../setup/engines'

const T0 = 1_700_000_000_000

type Idempotency = IdempotencyRepo

let engines: Engines

beforeAll(async () => {
  engines = await openEngines()
  // Records belong to an API key; seed one on each engine through the identity repos.
  const seed = {
    user: { id: 'usr_1', email: 'one@example.test', name: null, createdAt: T0 },
    workspace: { id: 'ws_1', slug: 'one', name: 'One', createdAt: T0 },
    key: {
      id: 'key_1',
      workspaceId: 'ws_1',
      userId: 'usr_1',
      name: 'k',
      keyHash: 'h1',
      keyPrefix: 'lnk_live_h1',
      mode: 'live' as const,
      permissions: [],
      allowedIps: [],
      createdAt: T0,
    },
    now: T0,
  }
  await createIdentityRepo(sqliteEngine(engines.sqlite.db)).bootstrap(seed)
  await createIdentityRepo(pgEngine(engines.pg)).bootstrap(seed)
})

afterAll(async () => {
  await engines?.close()
})

describe('server secrets', () => {
  test('created once, then the same; one per name; the same shape on both engines', async () => {
    const sqlite = createSettingsRepoSqlite(engines.sqlite.db)
    const sqliteAwaited = createSettingsRepo(sqliteEngine(engines.sqlite.db))
    const pg = createSettingsRepo(pgEngine(engines.pg))
    // Names of their own per repo on the one SQLite file, so each creates its secrets.
    const script = async (secret: (name: string, now: number) => Buffer | Promise<Buffer>, prefix = 'secret') => {
      const a = await secret(`${prefix}_a`, T0)
      const again = await secret(`${prefix}_a`, T0 + 1)
      const b = await secret(`${prefix}_b`, T0)
      return { length: a.length, stable: a.equals(again), distinct: !a.equals(b) }
    }
    const onSqlite = await script((name, now) => sqlite.serverSecret(name, now))
    expect(await script((name, now) => sqliteAwaited.serverSecret(name, now), 'awaited')).toEqual(onSqlite)
    expect(await script((name, now) => pg.serverSecret(name, now))).toEqual(onSqlite)
    // Both SQLite repos read what the other wrote.
    expect(sqlite.serverSecret('awaited_a', T0 + 3).equals(await sqliteAwaited.serverSecret('awaited_a', T0 + 3))).toBe(true)
    expect((await sqliteAwaited.serverSecret('secret_b', T0 + 3)).equals(sqlite.serverSecret('secret_b', T0 + 3))).toBe(true)
    expect(onSqlite).toEqual({ length: 32, stable: true, distinct: true })
    const [row] = await engines.sql`SELECT value, created_at FROM settings WHERE key = 'secret_a'`
    expect(Buffer.from(row.value, 'base64').equals(await pg.serverSecret('secret_a', T0 + 2))).toBe(true)
    expect(Number(row.created_at)).toBe(T0)
  })

  test('the preloaded port answers synchronously what the database holds, and refuses names it was not given', async () => {
    const pg = createSettingsRepo(pgEngine(engines.pg))
    const repo = await preloadSettings(pgEngine(engines.pg), ['secret_a', 'secret_c'], T0)
    expect(repo.serverSecret('secret_a', T0).equals(await pg.serverSecret('secret_a', T0))).toBe(true)
    expect(repo.serverSecret('secret_c', T0).equals(await pg.serverSecret('secret_c', T0))).toBe(true)
    expect(() => repo.serverSecret('secret_d', T0)).toThrow('secret_d')
  })

  test('nodes creating one secret at once all end with the same secret', async () => {
    for (let round = 0; round < 5; round++) {
      const name = `race_${round}`
      // One repo per "node": each asks on its own connection of the pool.
      const secrets = await Promise.all(Array.from({ length: 8 }, () => createSettingsRepo(pgEngine(engines.pg)).serverSecret(name, T0)))
      for (const s of secrets) expect(s.equals(secrets[0]!)).toBe(true)
      const rows = await engines.sql`SELECT value FROM settings WHERE key = ${name}`
      expect(rows.length).toBe(1)
      expect(Buffer.from(rows[0].value, 'base64').equals(secrets[0]!)).toBe(true)
    }
  })
})

const record = (id: string, key: string, at = T0, ttl = 1000): NewIdempotencyRecord => ({
  id,
  apiKeyId: 'key_1',
  key,
  method: 'POST',
  path: '/v1/links',
  requestHash: `hash_${id}`,
  createdAt: at,
  expiresAt: at + ttl,
})

describe('idempotency records', () => {
  test('the same answers on SQLite and PostgreSQL', async () => {
    const script = async (repo: Idempotency) => {
      const trace: unknown[] = []
      trace.push(await repo.reserve(record('idr_1', 'k1'), T0))
      // Held: another request with the key is refused while the first runs, and after it answered.
      trace.push(await repo.reserve(record('idr_2', 'k1'), T0 + 1))
      trace.push(await repo.find('key_1', 'k1'))
      await repo.complete('idr_1', 201, '{"ok":true}')
      trace.push(await repo.find('key_1', 'k1'))
      trace.push(await repo.reserve(record('idr_3', 'k1'), T0 + 999))
      // At its expiry the holder is replaced.
      trace.push(await repo.reserve(record('idr_4', 'k1', T0 + 1000), T0 + 1000))
      trace.push(await repo.find('key_1', 'k1'))
      // Released: the next request runs afresh.
      trace.push(await repo.reserve(record('idr_5', 'k2'), T0))
      await repo.release('idr_5')
      trace.push(await repo.find('key_1', 'k2'))
      trace.push(await repo.reserve(record('idr_6', 'k2'), T0))
      await repo.complete('idr_missing', 200, 'x')
      await repo.release('idr_missing')
      trace.push(await repo.find('key_1', 'missing'))
      trace.push(await repo.reserve(record('idr_7', 'k3', T0, 10), T0))
      trace.push(await repo.pruneExpired(T0 + 9))
      trace.push(await repo.pruneExpired(T0 + 1000))
      trace.push(await repo.find('key_1', 'k3'))
      trace.push(await repo.find('key_1', 'k2'))
      trace.push(await repo.pruneExpired(T0 + 2000))
      trace.push(await repo.find('key_1', 'k1'))
      return trace
    }
    const onSqlite = await script(createIdempotencyRepo(sqliteEngine(engines.sqlite.db)))
    const onPg = await script(createIdempotencyRepo(pgEngine(engines.pg)))
    expect(onPg).toEqual(onSqlite)
    expect(onPg.filter((t) => typeof t === 'boolean')).toEqual([true, false, false, true, true, true, true])
    expect(onPg.filter((t) => typeof t === 'number')).toEqual([0, 2, 1])
    expect(onPg[3]).toMatchObject({ id: 'idr_1', responseStatus: 201, responseBody: '{"ok":true}' })
    expect(onPg[6]).toMatchObject({ id: 'idr_4', responseStatus: null, responseBody: null })
  })

  test('of many requests claiming one key at once, exactly one wins, fresh or over an expired holder', async () => {
    const repo = createIdempotencyRepo(pgEngine(engines.pg))
    for (let round = 0; round < 5; round++) {
      const key = `race_${round}`
      const claims = (at: number, tag: string) => Promise.all(Array.from({ length: 10 }, (_, i) => repo.reserve(record(`idr_${key}_${tag}${i}`, key, at), at)))
      const fresh = await claims(T0, 'a')
      expect(fresh.filter(Boolean)).toHaveLength(1)
      const winner = `idr_${key}_a${fresh.indexOf(true)}`
      expect((await repo.find('key_1', key))?.id).toBe(winner)
      // Once the winner expired, the next racers replace it, and again only one of them.
      const later = T0 + 1000
      const over = await claims(later, 'b')
      expect(over.filter(Boolean)).toHaveLength(1)
      expect((await repo.find('key_1', key))?.id).toBe(`idr_${key}_b${over.indexOf(true)}`)
      const rows = await engines.sql`SELECT id FROM idempotency_records WHERE key = ${key}`
      expect(rows.length).toBe(1)
    }
  })
})
