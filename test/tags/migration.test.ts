// The link-organisation migration (issue 37) on a database of the previous schema version: every tag name its
// links carry becomes a tag of the link's workspace, once per workspace, and the API then lists them with
// their counts and renames them on those links. Run on the engine of the run.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { SQL } from 'bun'
import { openDatabase } from '../../src/db/client'
import { migrate } from '../../src/db/migrate'
import { EMBEDDED_MIGRATIONS } from '../../src/db/migrations.generated'
import { migratePostgres } from '../../src/db/pg/migrate'
import { EMBEDDED_PG_MIGRATIONS } from '../../src/db/pg/migrations.generated'
import { searchTextOf } from '../../src/modules/links/fields'
import { body, makeKey, ON_PG, rawRows, setupPg, setupSqlite, tempDir, type TestEnv } from '../helpers'
import { createTestDatabase, type TestDatabase } from '../setup/postgres'
import { storedLink } from './_tags'

/** The migrations of the schema version before the one that made tags resources. */
const before = (list: typeof EMBEDDED_MIGRATIONS) =>
  list.slice(
    0,
    list.findIndex((m) => m.tag.endsWith('_link_organisation')),
  )

const T0 = Date.UTC(2026, 0, 1)
const LINKS = [
  { id: '00000000-0000-7000-8000-000000000001', ws: 'ws_one', slug: 'a1', tags: ['spring', 'Sale'] },
  { id: '00000000-0000-7000-8000-000000000002', ws: 'ws_one', slug: 'a2', tags: ['spring'] },
  { id: '00000000-0000-7000-8000-000000000003', ws: 'ws_one', slug: 'a3', tags: [] },
  { id: '00000000-0000-7000-8000-000000000004', ws: 'ws_two', slug: 'b1', tags: ['spring'] },
]

/** Rows of the previous version, written as its server wrote them (the statements are the same on both engines). */
function seedStatements(): string[] {
  const q = (s: string) => `'${s.replace(/'/g, "''")}'`
  const out = [
    `INSERT INTO users (id, email, name, created_at) VALUES ('usr_old', 'old@example.com', NULL, ${T0})`,
    `INSERT INTO workspaces (id, slug, name, created_at) VALUES ('ws_one', 'one', 'One', ${T0}), ('ws_two', 'two', 'Two', ${T0})`,
    `INSERT INTO memberships (workspace_id, user_id, role, created_at) VALUES ('ws_one', 'usr_old', 'owner', ${T0}), ('ws_two', 'usr_old', 'owner', ${T0})`,
  ]
  for (const [i, l] of LINKS.entries()) {
    const destinationUrl = `https://example.com/${l.slug}`
    const searchText = searchTextOf({ slug: l.slug, title: null, destinationUrl, tags: l.tags })
    out.push(
      `INSERT INTO links (id, workspace_id, domain, slug, destination_url, tags, redirect_status, public_stats_enabled, deep_link_enabled,
        captcha_enabled, consent_required, conversion_tracking, is_active, is_archived, is_test, total_clicks, unique_clicks, search_text,
        created_at, updated_at)
       VALUES (${q(l.id)}, ${q(l.ws)}, 'localhost:8080', ${q(l.slug)}, ${q(destinationUrl)}, ${q(JSON.stringify(l.tags))}, 302, false, false,
        false, false, false, true, false, false, 0, 0, ${q(searchText)}, ${T0 + i}, ${T0 + i})`,
    )
    for (const tag of l.tags) out.push(`INSERT INTO link_tags (link_id, tag) VALUES (${q(l.id)}, ${q(tag)})`)
  }
  return out
}

let env: TestEnv
let database: TestDatabase | undefined

beforeAll(async () => {
  if (ON_PG) {
    database = await createTestDatabase()
    const sql = new SQL(database.url, { max: 1 })
    await migratePostgres(sql, before(EMBEDDED_PG_MIGRATIONS))
    for (const statement of seedStatements()) await sql.unsafe(statement)
    await sql.close()
    env = await setupPg({ database })
  } else {
    const dir = tempDir()
    const handle = openDatabase(join(dir, 'lnk.db'))
    migrate(handle.sqlite, before(EMBEDDED_MIGRATIONS))
    for (const statement of seedStatements()) handle.sqlite.run(statement)
    handle.close()
    env = setupSqlite({ env: { LNK_DATA_DIR: dir } })
  }
})
afterAll(async () => {
  await env.cleanup()
  await database?.drop()
})

test('every tag name of the links is a tag of its workspace, once', async () => {
  const rows = await rawRows(env, 'SELECT workspace_id, name, color, created_at FROM tags ORDER BY workspace_id, name')
  expect(rows.map((r) => [r.workspace_id, r.name, r.color])).toEqual([
    ['ws_one', 'Sale', null],
    ['ws_one', 'spring', null],
    ['ws_two', 'spring', null],
  ])
  // Created when the first link carrying it was.
  expect(rows.map((r) => Number(r.created_at))).toEqual([T0, T0, T0 + 3])
})

test('the API lists the backfilled tags with their counts and renames them on the migrated links', async () => {
  const key = (await makeKey(env.rt, 'one')).key
  const listed = (await body(await env.request('/v1/tags', { key }))).data
  expect(listed.map((t: { name: string; linkCount: number }) => [t.name, t.linkCount])).toEqual([
    ['Sale', 1],
    ['spring', 2],
  ])
  expect(listed[0].id).toMatch(/^tag_/)
  const spring = listed.find((t: { name: string }) => t.name === 'spring')
  const res = await env.request(`/v1/tags/${spring.id}`, { method: 'PATCH', key, json: { name: 'summer' } })
  expect((await body(res)).data).toMatchObject({ name: 'summer', linkCount: 2 })
  expect((await storedLink(env, LINKS[0]!.id)).tags).toEqual(['summer', 'Sale'])
  expect((await storedLink(env, LINKS[1]!.id)).tags).toEqual(['summer'])
  expect((await storedLink(env, LINKS[3]!.id)).tags).toEqual(['spring'])
})
