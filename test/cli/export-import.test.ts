// `lnk admin export` / `import` through the real entry point: a SQLite data directory filled through the API
// (links with tags and options, redirects with their clicks and sketches, a webhook delivery, a bridge page)
// goes to PostgreSQL and back to a new SQLite file with every row of every table unchanged, sequences
// included; a target with data, a file of another schema, a file broken near its end and bad paths are
// refused, and a failed import leaves its target without a row.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { openPostgres } from '../../src/db/pg/connect'
import { migratePostgres } from '../../src/db/pg/migrate'
import { pgSource } from '../../src/db/pg/transfer'
import { SCHEMA_TAG } from '../../src/db/transfer'
import { sqliteSource } from '../../src/db/transfer-sqlite'
import { TRANSFER_TABLES, type TransferSource } from '../../src/db/transfer-tables'
import { canonicalJson } from '../../src/platform/canonical-json'
import { body, bootstrapAccount, setupSqlite, tempDir } from '../helpers'
import { UA, visit } from '../redirect/_redirect'
import { createTestDatabase, type TestDatabase } from '../setup/postgres'
import { LOOPBACK_ENV, receiver } from '../webhooks/_webhooks'
import { runJson, runLnk } from './lnk-process'

const work = tempDir('lnk-transfer-')
/** The seeded SQLite data directory. */
let source: string
const file = (name: string) => join(work, name)
const databases: TestDatabase[] = []
let pg: TestDatabase

async function freshPg() {
  const db = await createTestDatabase()
  databases.push(db)
  return db
}

/** A SQLite data directory filled through the API the way a running service would, closed. */
async function seed(): Promise<string> {
  const rx = receiver()
  // SQLite on either pass: the round trip below goes through PostgreSQL (and exports from it) itself.
  const env = setupSqlite({ env: { ...LOOPBACK_ENV, LNK_TRUST_PROXY: '1' } })
  const dataDir = env.dir
  try {
    const { apiKey } = await bootstrapAccount(env.rt, 'Transfer Ünïcode')
    const post = async (path: string, json: unknown) => {
      const res = await env.request(`/v1${path}`, { method: 'POST', key: apiKey.key, json })
      const payload = await body(res)
      if (res.status !== 201) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(payload)}`)
      return payload.data
    }
    await post('/webhooks', { url: rx.url('/hook'), events: ['link.created'], customHeaders: [{ name: 'X-Team', value: 'growth' }] })
    await post('/bridge-pages', { title: 'Spring — page', templateSlug: 'link-in-bio' })
    const spring = await post('/links', {
      destinationUrl: 'https://example.com/spring?x=1',
      slug: 'spring',
      title: 'Spring ☀',
      tags: ['spring', 'ads'],
      utmSource: 'news',
      clickLimit: 1000,
      publicStatsEnabled: true,
    })
    await post('/links', { destinationUrl: 'https://example.com/other', tags: ['other'], expiresAt: '2099-01-01T00:00:00.000Z', uniqueIpLimit: 500 })
    for (let i = 1; i <= 12; i++)
      expect((await visit(env, spring.slug, { ip: `203.0.113.${i}`, ua: i % 2 ? UA.chrome : UA.iphone, referer: 'https://news.example/a' })).status).toBe(302)
    await visit(env, spring.slug, { ip: '198.51.100.7', ua: 'curl/8.0' })
    await env.rt.modules.clicks.buffer.flush()
    for (let i = 0; i < 10 && rx.received.length === 0; i++) await env.rt.worker.runDue()
    expect(rx.received.length).toBeGreaterThan(0)
    await env.rt.close()
  } finally {
    rx.stop()
  }
  // As after the outbox was pruned: the newest event is gone, its number must still never be handed out again.
  const db = new Database(join(dataDir, 'lnk.db'))
  db.query('DELETE FROM outbox WHERE seq = (SELECT max(seq) FROM outbox)').run()
  db.close()
  return dataDir
}

/** Every table's rows as sorted strings; JSON compared by meaning (jsonb keeps no key order) unless `exact`. */
function dump(dataDir: string, exact = false): Record<string, string[]> {
  const db = new Database(join(dataDir, 'lnk.db'), { readonly: true })
  try {
    const out: Record<string, string[]> = {}
    for (const table of TRANSFER_TABLES) {
      out[table.name] = (db.query(`SELECT * FROM "${table.name}"`).all() as Record<string, unknown>[])
        .map((row) => {
          const r: Record<string, unknown> = {}
          for (const { name, kind } of table.columns) {
            const v = row[name]
            r[name] =
              v === null
                ? null
                : kind === 'blob'
                  ? `blob:${Buffer.from(v as Uint8Array).toString('hex')}`
                  : kind === 'json' && !exact
                    ? canonicalJson(JSON.parse(v as string))
                    : v
          }
          return JSON.stringify(r)
        })
        .sort()
    }
    out.sqlite_sequence = (db.query('SELECT name, seq FROM sqlite_sequence').all() as unknown[]).map((r) => JSON.stringify(r)).sort()
    return out
  } finally {
    db.close()
  }
}

const readLines = (path: string) => (path.endsWith('.gz') ? gunzipSync(readFileSync(path)) : readFileSync(path)).toString('utf8').trim().split('\n')

async function pgCounts(url: string): Promise<Record<string, number>> {
  const sql = new SQL(url, { max: 1 })
  try {
    const counts: Record<string, number> = {}
    for (const t of TRANSFER_TABLES) counts[t.name] = Number((await sql.unsafe(`SELECT count(*) AS n FROM "${t.name}"`))[0].n)
    return counts
  } finally {
    await sql.close()
  }
}

const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0)
const oneLine = (stderr: string) => expect(stderr.trim().split('\n')).toHaveLength(1)

beforeAll(async () => {
  source = await seed()
  pg = await freshPg()
}, 60_000)
afterAll(async () => {
  for (const db of databases) await db.drop()
  rmSync(work, { recursive: true, force: true })
  rmSync(source, { recursive: true, force: true })
})

describe('SQLite → PostgreSQL → SQLite', () => {
  test('every row of every table arrives unchanged, blobs and sequences included', async () => {
    const original = dump(source)
    // What the seed must have produced for the round trip to prove anything.
    for (const t of [
      'workspaces',
      'api_keys',
      'links',
      'link_tags',
      'clicks',
      'link_rollups',
      'workspace_rollups',
      'link_visitors',
      'webhook_endpoints',
      'webhook_deliveries',
      'webhook_attempts',
      'bridge_pages',
      'page_blocks',
      'outbox',
      'settings',
    ]) {
      expect({ t, n: original[t]!.length }).not.toEqual({ t, n: 0 })
    }
    expect(original.link_rollups!.some((r) => r.includes('"visitors":"blob:'))).toBe(true)
    const [outboxSeq] = original.sqlite_sequence!.filter((r) => r.includes('"outbox"')).map((r) => JSON.parse(r).seq as number)
    const maxOutbox = Math.max(...original.outbox!.map((r) => JSON.parse(r).seq as number))
    expect(outboxSeq).toBeGreaterThan(maxOutbox)

    const exported = await runJson(['admin', 'export', file('a.ndjson'), '--json'], { dataDir: source })
    expect(exported).toMatchObject({ schema: SCHEMA_TAG, rows: total(Object.fromEntries(TRANSFER_TABLES.map((t) => [t.name, original[t.name]!.length]))) })
    const [headerLine, ...rowLines] = readLines(file('a.ndjson'))
    const header = JSON.parse(headerLine!)
    expect(header).toMatchObject({ format: 'lnk-export', version: 1, schema: SCHEMA_TAG, sequences: { outbox: outboxSeq } })
    expect(Object.keys(header.tables)).toEqual(TRANSFER_TABLES.map((t) => t.name))
    expect(rowLines).toHaveLength(exported.rows)
    const rollup = rowLines.map((l) => JSON.parse(l)).find((l) => l.t === 'link_rollups' && l.r.visitors)
    expect(typeof rollup.r.visitors.$blob).toBe('string')
    expect(rowLines.map((l) => JSON.parse(l)).find((l) => l.t === 'links').r.is_active).toBe(true)

    const imported = await runLnk(['admin', 'import', file('a.ndjson'), '--database-url', pg.url], { dataDir: join(work, 'unused'), timeoutMs: 60_000 })
    expect(imported).toMatchObject({ code: 0 })
    expect(imported.stdout).toContain(`Imported ${exported.rows} row(s)`)
    expect(imported.stdout).toMatch(new RegExp(`^ {2}clicks +${original.clicks!.length}$`, 'm'))
    expect(await pgCounts(pg.url)).toEqual(exported.tables)
    expect(existsSync(join(work, 'unused', 'lnk.db'))).toBe(false)
    // The identity sequence continues past the highest number ever handed out, not past the rows left.
    const sql = new SQL(pg.url, { max: 1 })
    try {
      const [next] = await sql.unsafe(`SELECT nextval(pg_get_serial_sequence('"outbox"', 'seq')) AS n`)
      expect(Number(next.n)).toBe(outboxSeq! + 1)
      await sql.unsafe(`SELECT setval(pg_get_serial_sequence('"outbox"', 'seq'), ${outboxSeq}, true)`)
    } finally {
      await sql.close()
    }

    const again = await runJson(['admin', 'export', file('b.ndjson.gz'), '--json'], { dataDir: join(work, 'unused'), env: { LNK_DATABASE_URL: pg.url } })
    expect(again.tables).toEqual(exported.tables)
    expect([...readFileSync(file('b.ndjson.gz')).subarray(0, 2)]).toEqual([0x1f, 0x8b])
    // Both exports carry the same rows (JSON by meaning: jsonb orders keys its own way).
    const rowsOf = (path: string) =>
      readLines(path)
        .slice(1)
        .map((l) => canonicalJson(JSON.parse(l)))
        .sort()
    expect(rowsOf(file('b.ndjson.gz'))).toEqual(rowsOf(file('a.ndjson')))
    expect(JSON.parse(readLines(file('b.ndjson.gz'))[0]!).sequences).toEqual(header.sequences)

    const back = join(work, 'back')
    const final = await runJson(['admin', 'import', file('b.ndjson.gz'), '--json'], { dataDir: back })
    expect(final.tables).toEqual(exported.tables)
    expect(dump(back)).toEqual(original)
  }, 120_000)

  test('SQLite to SQLite keeps even the JSON text byte for byte', async () => {
    const copy = join(work, 'copy')
    expect((await runLnk(['admin', 'import', file('a.ndjson')], { dataDir: copy, timeoutMs: 30_000 })).code).toBe(0)
    expect(dump(copy, true)).toEqual(dump(source, true))
  }, 60_000)
})

describe('refusals', () => {
  test('a target that holds a workspace: exit 1, one line, nothing written', async () => {
    for (const [args, dataDir] of [
      [['--database-url', pg.url], join(work, 'unused')],
      [[], source],
    ] as const) {
      const before = args.length ? await pgCounts(pg.url) : undefined
      const r = await runLnk(['admin', 'import', file('a.ndjson'), ...args], { dataDir, timeoutMs: 30_000 })
      expect(r.code).toBe(1)
      oneLine(r.stderr)
      expect(r.stderr).toContain('already holds 1 workspace(s); import only into an empty database')
      if (before) expect(await pgCounts(pg.url)).toEqual(before)
    }
  }, 60_000)

  test('a file of another schema names both tags and the remedy, and touches no target', async () => {
    const [headerLine, ...rest] = readLines(file('a.ndjson'))
    writeFileSync(file('old.ndjson'), [JSON.stringify({ ...JSON.parse(headerLine!), schema: '0003_older' }), ...rest].join('\n'))
    const target = join(work, 'never')
    const r = await runLnk(['admin', 'import', file('old.ndjson')], { dataDir: target })
    expect(r.code).toBe(1)
    oneLine(r.stderr)
    expect(r.stderr).toContain(`exported at schema 0003_older, this lnk is at ${SCHEMA_TAG}`)
    expect(r.stderr).toContain('same lnk version')
    expect(existsSync(join(target, 'lnk.db'))).toBe(false)
  })

  test('a line broken near the end rolls the whole import back, on both engines', async () => {
    const lines = readLines(file('a.ndjson'))
    lines[lines.length - 2] = lines[lines.length - 2]!.slice(0, 25)
    writeFileSync(file('broken.ndjson'), lines.join('\n'))
    // A row whose parent is missing: the engine itself refuses it, late in the file.
    const orphan = readLines(file('a.ndjson'))
    const at = orphan.findLastIndex((l) => JSON.parse(l).t === 'link_tags')
    const row = JSON.parse(orphan[at]!)
    orphan[at] = JSON.stringify({ ...row, r: { ...row.r, link_id: 'lnk_missing' } })
    writeFileSync(file('orphan.ndjson'), orphan.join('\n'))

    // A compressed export cut off: the header still reads, the rest does not.
    const gz = readFileSync(file('b.ndjson.gz'))
    writeFileSync(file('cut.ndjson.gz'), gz.subarray(0, Math.floor(gz.length * 0.6)))

    const broken = await freshPg()
    for (const [name, args, dataDir, why] of [
      ['cut.ndjson.gz', [], join(work, 'cut-sqlite'), 'cannot read the file: unexpected end of file'],
      ['broken.ndjson', [], join(work, 'broken-sqlite'), `line ${lines.length - 1}: not a JSON line`],
      ['broken.ndjson', ['--database-url', broken.url], join(work, 'unused'), `line ${lines.length - 1}: not a JSON line`],
      ['orphan.ndjson', ['--database-url', broken.url], join(work, 'unused'), 'foreign key'],
      ['orphan.ndjson', [], join(work, 'orphan-sqlite'), 'FOREIGN KEY'],
    ] as const) {
      const r = await runLnk(['admin', 'import', file(name), ...args], { dataDir, timeoutMs: 30_000 })
      expect({ name, args, code: r.code }).toEqual({ name, args, code: 1 })
      oneLine(r.stderr)
      expect(r.stderr).toContain(why)
      expect(r.stderr).toContain('the import was rolled back')
      const counts = args.length ? await pgCounts(broken.url) : Object.fromEntries(Object.entries(dump(dataDir)).map(([t, rows]) => [t, rows.length]))
      expect(total(counts)).toBe(0)
    }
  }, 90_000)

  test("a file cut short is refused by the header's row counts", async () => {
    const lines = readLines(file('a.ndjson'))
    writeFileSync(file('short.ndjson'), lines.slice(0, -1).join('\n'))
    const dataDir = join(work, 'short')
    const r = await runLnk(['admin', 'import', file('short.ndjson')], { dataDir })
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/the header announces \d+ row\(s\) of \w+, the file holds \d+/)
    expect(total(Object.fromEntries(Object.entries(dump(dataDir)).map(([t, rows]) => [t, rows.length])))).toBe(0)
  })

  test('bad paths: an existing or unplaceable export file, a missing or foreign import file, no database', async () => {
    const cases: [string[], string, string][] = [
      [['admin', 'export', file('a.ndjson')], source, 'already exists'],
      [['admin', 'export', join(work, 'no-such-dir', 'x.ndjson')], source, 'does not exist'],
      [['admin', 'export', file('z.ndjson')], join(work, 'empty-dir'), 'no database at'],
      [['admin', 'import', file('missing.ndjson')], join(work, 'never'), 'no file at'],
      [['admin', 'import', work], join(work, 'never'), 'no file at'],
      [['admin', 'import', join(source, 'lnk.db')], join(work, 'never'), 'line 1:'],
    ]
    for (const [args, dataDir, message] of cases) {
      const r = await runLnk(args, { dataDir })
      expect({ args, code: r.code }).toEqual({ args, code: 1 })
      oneLine(r.stderr)
      expect(r.stderr).toContain(message)
    }
    expect(existsSync(join(work, 'z.ndjson'))).toBe(false)
    expect(existsSync(join(work, 'never', 'lnk.db'))).toBe(false)
  }, 60_000)

  test('backup with a PostgreSQL URL names pg_dump, hides the password and leaves SQLite alone', async () => {
    const dataDir = join(work, 'backup-pg')
    const url = 'postgres://lnk:hunter2@db.internal:5433/lnk_prod'
    const r = await runLnk(['admin', 'backup', file('dump.bin'), '--database-url', url], { dataDir })
    expect(r.code).toBe(1)
    oneLine(r.stderr)
    expect(r.stderr).toContain(`pg_dump --format=custom --file=${file('dump.bin')} --host=db.internal --port=5433 --username=lnk --dbname=lnk_prod`)
    expect(r.stderr).not.toContain('hunter2')
    expect(existsSync(dataDir)).toBe(false)
    expect(existsSync(file('dump.bin'))).toBe(false)
  })
})

describe('one snapshot', () => {
  /** Counts workspaces, lets another connection add one, then reads the rows: the snapshot must not see it. */
  async function readAcrossAWrite(transferSource: TransferSource, write: () => Promise<void>) {
    const workspaces = TRANSFER_TABLES.find((t) => t.name === 'workspaces')!
    try {
      return await transferSource.snapshot(async (snapshot) => {
        const counted = await snapshot.count(workspaces)
        await write()
        const read: unknown[] = []
        for await (const batch of snapshot.rows(workspaces, 1)) read.push(...batch)
        return { counted, read: read.length, after: await snapshot.count(workspaces) }
      })
    } finally {
      await transferSource.close()
    }
  }
  const row = (id: string) => [id, `slug-${id}`, 'Later', Date.now()] as const

  test('SQLite: a write committed during the export is not in it', async () => {
    const path = join(source, 'lnk.db')
    const before = dump(source).workspaces!.length
    const other = new Database(path)
    try {
      const seen = await readAcrossAWrite(sqliteSource(path), async () => {
        other.query('INSERT INTO workspaces (id, slug, name, created_at) VALUES (?, ?, ?, ?)').run(...row('ws_snapshot_sqlite'))
      })
      expect(seen).toEqual({ counted: before, read: before, after: before })
      expect(dump(source).workspaces!.length).toBe(before + 1)
    } finally {
      other.query("DELETE FROM workspaces WHERE id = 'ws_snapshot_sqlite'").run()
      other.close()
    }
  })

  test('PostgreSQL: a write committed during the export is not in it', async () => {
    const db = await freshPg()
    const other = new SQL(db.url, { max: 1 })
    try {
      await migratePostgres(other)
      await other.unsafe('INSERT INTO workspaces (id, slug, name, created_at) VALUES ($1, $2, $3, $4)', [...row('ws_first')])
      const seen = await readAcrossAWrite(pgSource(await openPostgres(db.url, { max: 1 }), db.url), async () => {
        await other.unsafe('INSERT INTO workspaces (id, slug, name, created_at) VALUES ($1, $2, $3, $4)', [...row('ws_snapshot_pg')])
      })
      expect(seen).toEqual({ counted: 1, read: 1, after: 1 })
      expect((await pgCounts(db.url)).workspaces).toBe(2)
    } finally {
      await other.close()
    }
  })
})
