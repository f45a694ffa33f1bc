// Folder deletions racing each other (on PostgreSQL truly concurrent, on the requests' pool): of two deletions
// of one folder one does the work; two moves into each other's folder never deadlock; a move and the deletion
// of its target never leave a link filed in a folder that is gone. Every answer is one the API states.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { rawRows, setup, type TestEnv } from '../helpers'
import { account, eventsOf } from './_folders'

let env: TestEnv
beforeAll(async () => {
  env = await setup()
})
afterAll(() => env.cleanup())

const ROUNDS = 6

/** Links whose folder_id names no folder: never any. */
async function orphans(workspaceId: string): Promise<number> {
  const [row] = await rawRows(
    env,
    'SELECT count(*) AS n FROM links l WHERE l.workspace_id = ? AND l.folder_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM folders f WHERE f.id = l.folder_id)',
    workspaceId,
  )
  return row.n
}

test('two deletions of one folder with deleteLinks=true: one deletes, the other answers 404; each link is deleted once', async () => {
  const api = await account(env)
  for (let round = 0; round < ROUNDS; round++) {
    const f = await api.folder(`Twice ${round}`)
    const links = await Promise.all([1, 2, 3].map(() => api.link({ folderId: f.id })))
    const answers = await Promise.all([1, 2].map(() => api.call(`/folders/${f.id}?deleteLinks=true`, { method: 'DELETE' })))
    expect(answers.map((a) => a.status).sort()).toEqual([200, 404])
    expect(answers.find((a) => a.status === 200)!.body.data.deletedLinks).toBe(3)
    for (const link of links) expect((await api.call(`/links/${link.id}`)).status).toBe(404)
  }
  const deleted = await eventsOf(env, api.workspaceId, 'link.deleted')
  expect(deleted).toHaveLength(3 * ROUNDS)
  expect(new Set(deleted.map((e) => e.data.id)).size).toBe(3 * ROUNDS)
  expect(await eventsOf(env, api.workspaceId, 'folder.deleted')).toHaveLength(ROUNDS)
})

test('two folders each moving into the other: one moves, the other is refused (its target is gone); no deadlock', async () => {
  const api = await account(env)
  for (let round = 0; round < ROUNDS; round++) {
    const a = await api.folder(`A ${round}`)
    const b = await api.folder(`B ${round}`)
    await api.link({ folderId: a.id })
    await api.link({ folderId: b.id })
    const answers = await Promise.all([
      api.call(`/folders/${a.id}?moveTo=${b.id}`, { method: 'DELETE' }),
      api.call(`/folders/${b.id}?moveTo=${a.id}`, { method: 'DELETE' }),
    ])
    expect(answers.map((x) => x.status).sort()).toEqual([200, 400])
    const refused = answers.find((x) => x.status === 400)!
    expect(refused.body.error.details.issues.map((i: any) => i.path)).toEqual(['moveTo'])
    const survivor = answers[0]!.status === 200 ? b : a
    expect((await api.call(`/folders/${survivor.id}`)).body.data.linkCount).toBe(2)
  }
  expect(await orphans(api.workspaceId)).toBe(0)
})

test('a move into a folder raced by that folder’s own deletion leaves no link in a folder that is gone', async () => {
  const api = await account(env)
  for (let round = 0; round < ROUNDS; round++) {
    const source = await api.folder(`Source ${round}`)
    const target = await api.folder(`Target ${round}`)
    await api.link({ folderId: source.id })
    const [move, drop] = await Promise.all([
      api.call(`/folders/${source.id}?moveTo=${target.id}`, { method: 'DELETE' }),
      api.call(`/folders/${target.id}`, { method: 'DELETE' }),
    ])
    // Either the move went first (the target then holds a link: 409) or the target's deletion did (the move's
    // target is gone: 400, and the source keeps its link).
    expect([
      [200, 409],
      [400, 200],
    ]).toContainEqual([move.status, drop.status])
    if (drop.status === 409) expect(drop.body.error.code).toBe('folder_not_empty')
  }
  expect(await orphans(api.workspaceId)).toBe(0)
})
