// The identity repo on both engines: one script per group of methods runs on it on SQLite and on
// PostgreSQL (the authenticated request's reads prepared on each, Engine.prepare), and both must answer the same. Then what only several nodes can do to it, on
// separate connections of the pool: calls counted against a monthly cap, rotations of one key, last-use
// flushes of the same keys in opposite orders, and one new email added by many requests at once.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { pgEngine } from '../../src/db/engine/pg'
import { sqliteEngine } from '../../src/db/engine/sqlite'
import type { IdentityRepo, NewApiKey } from '../../src/modules/identity/port'
import { createIdentityRepo } from '../../src/modules/identity/repo'
import { openEngines, type Engines } from '../setup/engines'

const T0 = 1_700_000_000_000

type Repo = IdentityRepo

let engines: Engines
let sqliteRepo: Repo
let pgRepo: Repo

beforeAll(async () => {
  engines = await openEngines()
  sqliteRepo = createIdentityRepo(sqliteEngine(engines.sqlite.db))
  pgRepo = createIdentityRepo(pgEngine(engines.pg))
})

afterAll(async () => {
  await engines?.close()
})

/** Runs `script` on every repo and answers the PostgreSQL trace, after checking all are the same. */
async function onBoth<T>(script: (repo: Repo) => Promise<T>): Promise<T> {
  const onSqlite = await script(sqliteRepo)
  const onPg = await script(pgRepo)
  expect(onPg).toEqual(onSqlite)
  return onPg
}

const key = (id: string, over: Partial<NewApiKey> = {}): NewApiKey => ({
  id,
  workspaceId: 'ws_none',
  userId: 'usr_none',
  name: `key ${id}`,
  keyHash: `hash_${id}`,
  keyPrefix: `lnk_live_${id}`.slice(0, 12),
  mode: 'live',
  permissions: ['links:read', 'links:write'],
  allowedIps: [],
  createdAt: T0,
  ...over,
})

/** A user, workspace, owner membership and key, all named after `tag`. */
const boot = (repo: Repo, tag: string, email = `${tag}@example.test`, at = T0) =>
  repo.bootstrap({
    user: { id: `usr_${tag}`, email, name: tag, createdAt: at },
    workspace: { id: `ws_${tag}`, slug: tag, name: `Workspace ${tag}`, createdAt: at },
    key: key(`key_${tag}`, { createdAt: at }),
    now: at,
  })

describe('the same answers on SQLite and PostgreSQL', () => {
  test('users, workspaces and memberships', async () => {
    const trace = await onBoth(async (repo) => {
      const first = await boot(repo, 'a1', 'ann@example.test', T0 + 10)
      // The same email again: the user is reused, the new id is ignored.
      const second = await boot(repo, 'a2', 'ann@example.test', T0 + 20)
      const older = await repo.insertWorkspace({ id: 'ws_a0', slug: 'a0', name: 'Older', createdAt: T0 }, 'usr_a1')
      const bob = await repo.addMember('ws_a1', { id: 'usr_bob', email: 'bob@example.test', name: null, createdAt: T0 + 30 }, 'member', T0 + 30)
      // An existing member takes the new role and keeps the rest of the row.
      const bobAgain = await repo.addMember('ws_a1', { id: 'usr_other', email: 'bob@example.test', name: 'ignored', createdAt: T0 + 40 }, 'owner', T0 + 40)
      await repo.addMember('ws_a2', { id: 'usr_bob2', email: 'bob@example.test', name: null, createdAt: T0 + 50 }, 'member', T0 + 50)
      return {
        first,
        second,
        older,
        bob,
        bobAgain,
        user: await repo.findUser('usr_a1'),
        ignoredUser: await repo.findUser('usr_a2'),
        byEmail: await repo.findUserByEmail('bob@example.test'),
        noEmail: await repo.findUserByEmail('nobody@example.test'),
        workspaceById: await repo.findWorkspace('ws_a1'),
        workspaceBySlug: await repo.findWorkspace('a2'),
        noWorkspace: await repo.findWorkspace('zz'),
        memberById: await repo.findMemberWorkspace('usr_bob', 'ws_a1'),
        memberBySlug: await repo.findMemberWorkspace('usr_bob', 'a2'),
        notMember: await repo.findMemberWorkspace('usr_bob', 'a0'),
        annWorkspaces: await repo.listUserWorkspaces('usr_a1'),
        bobWorkspaces: await repo.listUserWorkspaces('usr_bob'),
        owner: await repo.workspaceOwner('ws_a1'),
        noOwner: await repo.workspaceOwner('ws_none'),
      }
    })
    expect(trace.second.user).toEqual(trace.first.user)
    expect(trace.ignoredUser).toBeUndefined()
    expect(trace.bobAgain).toEqual(trace.bob)
    expect(trace.annWorkspaces.map((m) => [m.workspace.slug, m.role])).toEqual([
      ['a0', 'owner'],
      ['a1', 'owner'],
      ['a2', 'owner'],
    ])
    expect(trace.bobWorkspaces.map((m) => [m.workspace.slug, m.role])).toEqual([
      ['a1', 'owner'],
      ['a2', 'member'],
    ])
    expect(trace.owner).toBe('usr_a1')
    expect(trace.memberBySlug?.role).toBe('member')
    expect(trace.notMember).toBeUndefined()
  })

  test('keys: insert, find, list, update, rotation grace', async () => {
    const trace = await onBoth(async (repo) => {
      await boot(repo, 'k1', 'kim@example.test')
      const restricted = await repo.insertKey(
        key('key_k2', {
          workspaceId: 'ws_k1',
          userId: 'usr_k1',
          mode: 'test',
          scopeFilters: { domains: ['go.example.test'], tags: ['spring'] },
          schedule: { timezone: 'Europe/Berlin', days: [1, 2, 3], startMinute: 540, endMinute: 1020 },
          monthlyCallCap: 1000,
          rateLimitOverride: 5,
          expiresAt: T0 + 1e9,
          createdAt: T0 - 5,
        }),
      )
      const paused = await repo.updateKey('key_k1', { pausedAt: T0 + 1, pausedReason: 'holiday', name: 'renamed' })
      const missing = await repo.updateKey('key_none', { name: 'x' })
      // A rotation as the service writes it: the new secret, the one read before kept for a grace.
      const rotated = await repo.updateKey('key_k1', {
        keyHash: 'hash_new',
        keyPrefix: 'lnk_live_new',
        previousKeyHash: 'hash_key_k1',
        previousKeyExpiresAt: T0 + 100,
        rotatedAt: T0 + 2,
      })
      const byNew = await repo.findKeyByHash('hash_new', T0 + 99)
      const byOldInGrace = await repo.findKeyByHash('hash_key_k1', T0 + 99)
      const byOldAfterGrace = await repo.findKeyByHash('hash_key_k1', T0 + 100)
      // Rotating without a grace and revoking clear the previous secret.
      const noGrace = await repo.updateKey('key_k2', {
        keyHash: 'hash_k2b',
        keyPrefix: 'lnk_test_k2b',
        previousKeyHash: null,
        previousKeyExpiresAt: null,
        rotatedAt: T0 + 3,
      })
      const revoked = await repo.updateKey('key_k1', { revokedAt: T0 + 4, revokedReason: 'leaked', previousKeyHash: null, previousKeyExpiresAt: null })
      await boot(repo, 'k3', 'kai@example.test', T0 - 5)
      return {
        restricted,
        paused,
        missing,
        rotated,
        byNew,
        byOldInGrace,
        byOldAfterGrace,
        noGrace,
        revoked,
        found: await repo.findKey('key_k2'),
        notFound: await repo.findKey('key_none'),
        all: (await repo.listKeys()).map((k) => k.id),
        ofWorkspace: (await repo.listKeys('ws_k1')).map((k) => k.id),
        ofMode: (await repo.listKeys(undefined, 'test')).map((k) => k.id),
        ofBoth: (await repo.listKeys('ws_k3', 'live')).map((k) => k.id),
      }
    })
    expect(trace.restricted.scopeFilters).toEqual({ domains: ['go.example.test'], tags: ['spring'] })
    expect(trace.found?.schedule?.days).toEqual([1, 2, 3])
    expect(trace.rotated?.previousKeyHash).toBe('hash_key_k1')
    expect(trace.byOldInGrace?.id).toBe('key_k1')
    expect(trace.byOldAfterGrace).toBeUndefined()
    expect(trace.missing).toBeUndefined()
    expect(trace.noGrace?.previousKeyHash).toBeNull()
    // Oldest first, ties by id (key_k2 and key_k3 share a creation time; the first test made key_a1, key_a2).
    expect(trace.all).toEqual(['key_k2', 'key_k3', 'key_k1', 'key_a1', 'key_a2'])
    expect(trace.ofMode).toEqual(['key_k2'])
  })

  test('monthly calls and last use', async () => {
    const trace = await onBoth(async (repo) => {
      await boot(repo, 'c1', 'cy@example.test')
      await boot(repo, 'c2', 'cy@example.test')
      const capped = [] as (number | undefined)[]
      for (let i = 0; i < 4; i++) capped.push(await repo.countCall('key_c1', '2024-05', 2))
      const uncapped = [] as (number | undefined)[]
      for (let i = 0; i < 3; i++) uncapped.push(await repo.countCall('key_c1', '2024-06', null))
      const zeroCap = await repo.countCall('key_c2', '2024-05', 0)
      await repo.writeLastUsed([])
      await repo.writeLastUsed([
        { keyId: 'key_c2', at: T0 + 5, ip: '192.0.2.1' },
        { keyId: 'key_c1', at: T0 + 6, ip: null },
      ])
      await repo.writeLastUsed([{ keyId: 'key_c1', at: T0 + 7, ip: '2001:db8::1' }])
      const stamps = async (id: string) => {
        const k = (await repo.findKey(id))!
        return [k.lastUsedAt, k.lastUsedIp]
      }
      return {
        capped,
        uncapped,
        zeroCap,
        may: await repo.callsInMonth('key_c1', '2024-05'),
        june: await repo.callsInMonth('key_c1', '2024-06'),
        none: await repo.callsInMonth('key_c1', '2024-07'),
        c1: await stamps('key_c1'),
        c2: await stamps('key_c2'),
      }
    })
    expect(trace.capped).toEqual([1, 2, undefined, undefined])
    expect(trace.uncapped).toEqual([1, 2, 3])
    expect([trace.may, trace.june, trace.none]).toEqual([2, 3, 0])
    expect(trace.c1).toEqual([T0 + 7, '2001:db8::1'])
    expect(trace.c2).toEqual([T0 + 5, '192.0.2.1'])
  })
})

describe('several nodes at once (PostgreSQL)', () => {
  test('calls counted together never pass the monthly cap', async () => {
    await boot(pgRepo, 'cap')
    for (let round = 0; round < 3; round++) {
      const month = `2030-0${round + 1}`
      const answers = await Promise.all(Array.from({ length: 24 }, () => pgRepo.countCall('key_cap', month, 7)))
      expect(answers.filter((n) => n !== undefined).sort((a, b) => a! - b!)).toEqual([1, 2, 3, 4, 5, 6, 7])
      expect(answers.filter((n) => n === undefined)).toHaveLength(17)
      expect(await pgRepo.callsInMonth('key_cap', month)).toBe(7)
    }
    // Without a cap every call counts.
    await Promise.all(Array.from({ length: 24 }, () => pgRepo.countCall('key_cap', '2031-01', null)))
    expect(await pgRepo.callsInMonth('key_cap', '2031-01')).toBe(24)
  })

  test('two rotations of one key at once keep both new secrets working, as one after the other would', async () => {
    await boot(pgRepo, 'rot')
    let current = 'hash_key_rot'
    for (let round = 0; round < 5; round++) {
      // Both callers read the key before either writes: each names the same secret as the previous one.
      const read = (await pgRepo.findKey('key_rot'))!
      expect(read.keyHash).toBe(current)
      const rotate = (hash: string) =>
        pgRepo.updateKey('key_rot', {
          keyHash: hash,
          keyPrefix: hash.slice(0, 12),
          previousKeyHash: read.keyHash,
          previousKeyExpiresAt: T0 + 1e6,
          rotatedAt: T0,
        })
      const [a, b] = [`hash_a${round}`, `hash_b${round}`]
      await Promise.all([rotate(a), rotate(b)])
      const after = (await pgRepo.findKey('key_rot'))!
      // Whichever wrote last holds the key; the other's secret is its previous one, in its grace.
      expect([after.keyHash, after.previousKeyHash].sort()).toEqual([a, b])
      expect((await pgRepo.findKeyByHash(a, T0))?.id).toBe('key_rot')
      expect((await pgRepo.findKeyByHash(b, T0))?.id).toBe('key_rot')
      current = after.keyHash
    }
  })

  test('last-use flushes of the same keys in opposite orders do not deadlock, and keep the newest stamp', async () => {
    await boot(pgRepo, 'lu')
    const ids = Array.from({ length: 40 }, (_, i) => `key_lu${String(i).padStart(2, '0')}`)
    for (const id of ids) await pgRepo.insertKey(key(id, { workspaceId: 'ws_lu', userId: 'usr_lu' }))
    for (let round = 1; round <= 3; round++) {
      const newer = T0 + round * 1000
      const up = ids.map((keyId) => ({ keyId, at: newer, ip: 'newer' }))
      const down = [...ids].reverse().map((keyId) => ({ keyId, at: newer - 500, ip: 'older' }))
      await Promise.all([pgRepo.writeLastUsed(up), pgRepo.writeLastUsed(down)])
      for (const k of await pgRepo.listKeys('ws_lu')) {
        if (k.id === 'key_lu') continue
        expect([k.lastUsedAt, k.lastUsedIp]).toEqual([newer, 'newer'])
      }
    }
    // A node flushing late with an older stamp leaves the newer one.
    await pgRepo.writeLastUsed([{ keyId: 'key_lu00', at: T0, ip: 'late' }])
    expect((await pgRepo.findKey('key_lu00'))?.lastUsedIp).toBe('newer')
  })

  test('one new email added by many requests at once becomes one user in every workspace', async () => {
    const slugs = Array.from({ length: 8 }, (_, i) => `em${i}`)
    for (const slug of slugs) await pgRepo.insertWorkspace({ id: `ws_${slug}`, slug, name: slug, createdAt: T0 }, 'usr_a1')
    const users = await Promise.all(
      slugs.map((slug, i) => pgRepo.addMember(`ws_${slug}`, { id: `usr_new${i}`, email: 'new@example.test', name: null, createdAt: T0 }, 'member', T0)),
    )
    expect(new Set(users.map((u) => u.id)).size).toBe(1)
    const [{ count }] = await engines.sql`SELECT count(*)::int AS count FROM users WHERE email = 'new@example.test'`
    expect(count).toBe(1)
    expect((await pgRepo.listUserWorkspaces(users[0]!.id)).map((m) => m.workspace.slug)).toEqual(slugs)

    // Bootstraps of one new email at once, each with its own workspace, share the user too.
    const booted = await Promise.all(Array.from({ length: 6 }, (_, i) => boot(pgRepo, `bt${i}`, 'boot@example.test')))
    expect(new Set(booted.map((b) => b.user.id)).size).toBe(1)
    expect(new Set(booted.map((b) => b.key.userId))).toEqual(new Set([booted[0]!.user.id]))
  })
})
