// The runtime on PostgreSQL (openRuntime): two nodes on one database hear each other's bus notices through
// LISTEN/NOTIFY, never their own twice; writes that publish events do not clear every cache; /readyz asks
// the database; the periodic sweeps run on one node only.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { SQL } from 'bun'
import { bootstrapAccount, setupPg, type PgTestEnv } from '../helpers'

let a: PgTestEnv
let b: PgTestEnv

beforeAll(async () => {
  a = await setupPg()
  b = await setupPg({ database: a.database })
}, 60_000)

afterAll(async () => {
  await b?.cleanup()
  await a?.cleanup()
})

async function until(ms: number, probe: () => boolean) {
  const deadline = performance.now() + ms
  while (!probe() && performance.now() < deadline) await Bun.sleep(10)
  return probe()
}

describe('the runtime on PostgreSQL', () => {
  test('a bus notice emitted on one node reaches the other once, and its own listeners once', async () => {
    const onA: string[] = []
    const onB: string[] = []
    const offA = a.rt.bus.on('page.changed', ({ id }) => void onA.push(id))
    const offB = b.rt.bus.on('page.changed', ({ id }) => void onB.push(id))
    try {
      a.rt.bus.emit('page.changed', { id: 'pg_from_a' })
      expect(await until(2000, () => onB.includes('pg_from_a'))).toBe(true)
      b.rt.bus.emit('page.changed', { id: 'pg_from_b' })
      expect(await until(2000, () => onA.includes('pg_from_b'))).toBe(true)
      await Bun.sleep(200)
      expect(onA).toEqual(['pg_from_a', 'pg_from_b'])
      expect(onB).toEqual(['pg_from_a', 'pg_from_b'])
    } finally {
      offA()
      offB()
    }
  })

  test('writes that publish events wake the other node without clearing its caches', async () => {
    let resets = 0
    const off = b.rt.bus.on('caches.reset', () => void resets++)
    const heard: string[] = []
    const offLinks = b.rt.bus.on('link.changed', ({ slug }) => void heard.push(slug))
    try {
      const { apiKey } = await bootstrapAccount(a.rt)
      for (let i = 0; i < 3; i++) {
        const res = await a.request('/v1/links', {
          method: 'POST',
          key: apiKey.key,
          json: { destinationUrl: `https://example.com/r/${i}`, slug: `runtime-${i}` },
        })
        expect(res.status).toBe(201)
      }
      expect(await until(2000, () => heard.length === 3)).toBe(true)
      expect(resets).toBe(0)
    } finally {
      off()
      offLinks()
    }
  })

  test('/readyz answers 200 while PostgreSQL answers', async () => {
    const res = await b.request('/readyz')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ status: 'ready' })
  })

  test('the SQLite connections are refused on a PostgreSQL runtime', () => {
    expect(() => a.rt.db).toThrow(/PostgreSQL/)
    expect(a.rt.store.engine).toBe('pg')
  })
})

describe('shutdown when the database went away', () => {
  test('close() still ends, closing every connection, and logs the step that failed', async () => {
    const lines: string[] = []
    const { createLogger } = await import('../../src/platform/log')
    const node = await setupPg({ log: createLogger('error', (line) => lines.push(line)) })
    const name = new URL(node.database.url).pathname.slice(1)
    const admin = new SQL(node.database.url.replace(`/${name}`, '/postgres'), { max: 1 })
    try {
      await admin.unsafe(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}'`)
      // Bounded: a close that never ends fails here instead of holding the run.
      const outcome = await Promise.race([node.rt.close().then(() => 'closed'), Bun.sleep(15_000).then(() => 'still closing after 15 s')])
      expect(outcome).toBe('closed')
      expect(lines.some((l) => l.includes('shutdown step failed'))).toBe(true)
      // A backend leaves pg_stat_activity when its process exits, shortly after the client closed the
      // socket; a connection left open would stay. So: none left within a second or two.
      const left = async () => ((await admin.unsafe(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = '${name}'`)) as { n: number }[])[0]!.n
      const deadline = Date.now() + 2_000
      while ((await left()) > 0 && Date.now() < deadline) await Bun.sleep(50)
      expect(await left()).toBe(0)
    } finally {
      await admin.close()
      await node.database.drop()
      rmSync(node.dir, { recursive: true, force: true })
    }
  }, 30_000)
})
