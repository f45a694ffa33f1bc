// Two `lnk serve` processes on one PostgreSQL database, as an operator runs them behind a load balancer
// (issue 18): what one node writes, the other serves within a second; clicks and limits count exactly
// across both; events are delivered once; a poll on one node hears events made on the other; and a node
// killed mid-delivery loses nothing, its jobs finished by the other once their lease lapses.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { tempDir } from '../helpers'
import { createTestDatabase, type TestDatabase } from '../setup/postgres'
import { runJson, startServe, type ServerProcess } from '../cli/lnk-process'
import { LOOPBACK_ENV, receiver, type Receiver } from '../webhooks/_webhooks'

const SHORT = 'lnk.test'
const LEASE_SECONDS = 5

let pg: TestDatabase
const dirs: string[] = []
let a: ServerProcess
let b: ServerProcess
let key = ''
const receivers: Receiver[] = []

function nodeEnv(): Record<string, string> {
  return {
    ...LOOPBACK_ENV,
    LNK_DATABASE_URL: pg.url,
    LNK_DATABASE_POOL_SIZE: '6',
    LNK_BASE_URL: `http://${SHORT}`,
    LNK_SHORT_DOMAINS: SHORT,
    LNK_TRUST_PROXY: '1',
    LNK_JOB_LEASE_SECONDS: String(LEASE_SECONDS),
    LNK_LOG_LEVEL: 'warn',
  }
}

async function startNode(): Promise<ServerProcess> {
  const dir = tempDir()
  dirs.push(dir)
  return startServe(dir, nodeEnv(), 30_000)
}

beforeAll(async () => {
  pg = await createTestDatabase()
  // Both at once: the migration lock makes one of them migrate, the other wait and find nothing to do.
  ;[a, b] = await Promise.all([startNode(), startNode()])
  const dir = tempDir()
  dirs.push(dir)
  const out = await runJson<{ apiKey: { key: string } }>(['admin', 'bootstrap', '--email', 'ops@example.com', '--workspace', 'Ops', '--json'], {
    dataDir: dir,
    env: { LNK_DATABASE_URL: pg.url },
  })
  key = out.apiKey.key
}, 90_000)

afterAll(async () => {
  for (const node of [a, b]) node?.kill()
  await Promise.all([a?.proc.exited, b?.proc.exited])
  for (const r of receivers) r.stop()
  await pg?.drop()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

async function api(node: ServerProcess, path: string, init: { method?: string; json?: unknown } = {}) {
  const res = await fetch(`${node.url}/v1${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${key}`, ...(init.json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : null }
}

async function createLink(node: ServerProcess, input: Record<string, unknown>) {
  const res = await api(node, '/links', { method: 'POST', json: input })
  if (res.status !== 201) throw new Error(`link not created: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body.data as { id: string; slug: string; destinationUrl: string }
}

function visit(node: ServerProcess, slug: string, ip = '203.0.113.7') {
  return fetch(`${node.url}/${slug}`, {
    redirect: 'manual',
    headers: { host: SHORT, 'x-forwarded-for': ip, 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/130.0 Safari/537.36' },
  })
}

/** Polls `probe` until it holds, at most `ms`; answers how long it took, or throws. */
async function within(ms: number, what: string, probe: () => Promise<boolean>): Promise<number> {
  const started = performance.now()
  for (;;) {
    if (await probe()) return performance.now() - started
    if (performance.now() - started > ms) throw new Error(`${what}: not within ${ms} ms`)
    await Bun.sleep(20)
  }
}

/** Runs `tasks` with at most `width` in flight. */
async function pooled<T>(tasks: (() => Promise<T>)[], width: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length)
  let next = 0
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < tasks.length) {
        const i = next++
        results[i] = await tasks[i]!()
      }
    }),
  )
  return results
}

describe('two nodes on one PostgreSQL', () => {
  test('a link created on A redirects on B; a PATCH on B is served by A within 1 s', async () => {
    const link = await createLink(a, { destinationUrl: 'https://example.com/first' })
    await within(1000, 'B redirects a link A created', async () => (await visit(b, link.slug)).headers.get('location') === 'https://example.com/first')
    // A has it cached now; the PATCH on B must reach A's cache through the notice.
    expect((await visit(a, link.slug)).headers.get('location')).toBe('https://example.com/first')
    const patched = await api(b, `/links/${link.id}`, { method: 'PATCH', json: { destinationUrl: 'https://example.com/second' } })
    expect(patched.status).toBe(200)
    await within(1000, 'A serves the destination B set', async () => (await visit(a, link.slug)).headers.get('location') === 'https://example.com/second')
  }, 30_000)

  test('1,000 clicks spread over both nodes are all counted', async () => {
    const link = await createLink(a, { destinationUrl: 'https://example.com/counted' })
    const statuses = await pooled(
      Array.from({ length: 1000 }, (_, i) => async () => (await visit(i % 2 ? a : b, link.slug, `198.51.100.${i % 250}`)).status),
      16,
    )
    expect(statuses.filter((s) => s === 302)).toHaveLength(1000)
    let total = -1
    await within(15_000, 'every click flushed', async () => {
      total = (await api(b, `/links/${link.id}`)).body.data.totalClicks
      return total >= 1000
    })
    expect(total).toBe(1000)
  }, 60_000)

  test('a click limit of 10 hit from both nodes at once lets exactly 10 through', async () => {
    const link = await createLink(b, { destinationUrl: 'https://example.com/limited', clickLimit: 10 })
    const statuses = await Promise.all(Array.from({ length: 40 }, (_, i) => visit(i % 2 ? a : b, link.slug, `192.0.2.${i + 1}`).then((r) => r.status)))
    expect(statuses.filter((s) => s === 302)).toHaveLength(10)
    expect(statuses.filter((s) => s !== 302).every((s) => s === 410)).toBe(true)
  }, 30_000)

  test('200 events made on both nodes are each delivered once', async () => {
    const hook = receiver()
    receivers.push(hook)
    const created = await api(a, '/webhooks', { method: 'POST', json: { url: hook.url(), events: ['link.created'] } })
    expect(created.status).toBe(201)
    const links = await pooled(
      Array.from({ length: 200 }, (_, i) => () => createLink(i % 2 ? a : b, { destinationUrl: `https://example.com/event/${i}` })),
      8,
    )
    const wanted = new Set(links.map((l) => l.id))
    const delivered = () => hook.received.map((r) => JSON.parse(r.body).data.id as string).filter((id) => wanted.has(id))
    await within(30_000, 'every link.created delivered', async () => new Set(delivered()).size === wanted.size)
    await Bun.sleep(500)
    expect(delivered()).toHaveLength(200)
    const ids = hook.received.map((r) => r.headers['webhook-id'])
    expect(new Set(ids).size).toBe(ids.length)
  }, 60_000)

  test('a poll held on B receives an event made on A', async () => {
    const session = await api(b, '/webhooks/cli/sessions', { method: 'POST' })
    expect(session.status).toBe(201)
    const id = session.body.data.id as string
    const poll = api(b, `/webhooks/cli/events?session=${id}&wait=10`)
    await Bun.sleep(300)
    const link = await createLink(a, { destinationUrl: 'https://example.com/forwarded' })
    const started = performance.now()
    const answered = await poll
    expect(answered.status).toBe(200)
    expect(JSON.stringify(answered.body)).toContain(link.id)
    // Woken by the notice, not by the end of its 10 s wait.
    expect(performance.now() - started).toBeLessThan(8000)
  }, 30_000)

  test('kill -9 of A during deliveries: B finishes them after the lease, none lost, none doubled', async () => {
    const hook = receiver(() => ({ status: 200, delayMs: 400 }))
    receivers.push(hook)
    const created = await api(a, '/webhooks', { method: 'POST', json: { url: hook.url(), events: ['link.created'] } })
    expect(created.status).toBe(201)
    const endpointId = created.body.data.id as string
    const links = await pooled(
      Array.from({ length: 30 }, (_, i) => () => createLink(a, { destinationUrl: `https://example.com/crash/${i}` })),
      6,
    )
    const wanted = new Set(links.map((l) => l.id))
    await within(10_000, 'deliveries under way', async () => hook.received.length > 0)
    a.proc.kill('SIGKILL')
    await a.proc.exited
    const delivered = () => new Set(hook.received.map((r) => JSON.parse(r.body).data.id as string).filter((id) => wanted.has(id)))
    await within((LEASE_SECONDS + 30) * 1000, 'B delivered what A left', async () => delivered().size === wanted.size)
    // Each event is one delivery, recorded as succeeded once; a request A had sent when it died is sent
    // again by B under the same webhook-id (the receiver's key to drop the repeat).
    await within(10_000, 'every delivery recorded', async () => {
      const list = await api(b, `/webhooks/${endpointId}/deliveries?status=success&limit=100`)
      return list.status === 200 && list.body.data.length === 30
    })
    const byId = new Map<string, Set<string>>()
    for (const r of hook.received) {
      const linkId = JSON.parse(r.body).data.id as string
      byId.set(linkId, (byId.get(linkId) ?? new Set()).add(r.headers['webhook-id']!))
    }
    for (const ids of byId.values()) expect(ids.size).toBe(1)
  }, 90_000)
})
