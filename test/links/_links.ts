// Shared helpers of the links tests (not a test file itself): the Link shape of spec 2.2, and small readers
// of the database the tests check side effects with.
import { expect } from 'bun:test'
import { body, bootstrapAccount, rawRows, storedEvents, type TestEnv } from '../helpers'

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
export const BASE62_7 = /^[0-9A-Za-z]{7}$/

/** Every field of spec 2.2 with the type it must have (qr only when asked for). */
export const SPEC_LINK_FIELDS = [
  'id',
  'slug',
  'domain',
  'destinationUrl',
  'shortUrl',
  'title',
  'description',
  'tags',
  'totalClicks',
  'uniqueClicks',
  'isActive',
  'isArchived',
  'isTest',
  'expiresAt',
  'createdAt',
] as const

/** The create fields of spec 2.3 (without include) plus conversionTracking. */
export const CREATE_FIELDS = [
  'destinationUrl',
  'slug',
  'domain',
  'title',
  'description',
  'tags',
  'folderId',
  'campaignId',
  'redirectStatus',
  'fallbackUrl',
  'password',
  'expiresAt',
  'clickLimit',
  'uniqueIpLimit',
  'publicStatsEnabled',
  'utmSource',
  'utmMedium',
  'utmCampaign',
  'utmTerm',
  'utmContent',
  'ogTitle',
  'ogDescription',
  'ogImageUrl',
  'twitterCard',
  'deepLinkEnabled',
  'captchaEnabled',
  'consentRequired',
  'conversionTracking',
] as const

const nullableString = (v: unknown) => v === null || typeof v === 'string'

/** Asserts every field of spec 2.2 is present and typed, and that no secret leaks. */
export function expectLinkShape(link: any) {
  expect(link).toBeObject()
  expect(link.id).toMatch(UUID)
  expect(typeof link.slug).toBe('string')
  expect(typeof link.domain).toBe('string')
  expect(() => new URL(link.destinationUrl)).not.toThrow()
  expect(link.shortUrl).toBe(`http://${link.domain}/${link.slug}`)
  expect(nullableString(link.title)).toBe(true)
  expect(nullableString(link.description)).toBe(true)
  expect(Array.isArray(link.tags)).toBe(true)
  for (const tag of link.tags) expect(typeof tag).toBe('string')
  expect(Number.isInteger(link.totalClicks)).toBe(true)
  expect(Number.isInteger(link.uniqueClicks)).toBe(true)
  expect(typeof link.isActive).toBe('boolean')
  expect(typeof link.isArchived).toBe('boolean')
  expect(typeof link.isTest).toBe('boolean')
  if (link.expiresAt !== null) expect(link.expiresAt).toMatch(ISO)
  expect(link.createdAt).toMatch(ISO)
  expect(typeof link.hasPassword).toBe('boolean')
  for (const secret of ['password', 'passwordHash', 'password_hash', 'workspaceId', 'createdByKeyId']) expect(link).not.toHaveProperty(secret)
}

/** A complete create body: every field of spec 2.3 plus conversionTracking, none left at its default (folderId: pass a folder of the workspace). */
export function fullBody(slug: string, overrides: Record<string, unknown> = {}) {
  return {
    destinationUrl: 'https://example.com/landing?ref=full',
    slug,
    domain: 'localhost:8080',
    title: 'Full link',
    description: 'Every field of the create body',
    tags: ['alpha', 'beta'],
    folderId: 'fld_1',
    campaignId: 'cmp_1',
    redirectStatus: 308,
    fallbackUrl: 'https://example.com/gone',
    password: 'correct horse battery staple',
    expiresAt: '2099-01-02T03:04:05.678Z',
    clickLimit: 100,
    uniqueIpLimit: 10,
    publicStatsEnabled: true,
    utmSource: 'newsletter',
    utmMedium: 'email',
    utmCampaign: 'spring',
    utmTerm: 'shoes',
    utmContent: 'hero',
    ogTitle: 'OG title',
    ogDescription: 'OG description',
    ogImageUrl: 'https://example.com/og.png',
    twitterCard: 'summary_large_image',
    deepLinkEnabled: true,
    captchaEnabled: true,
    consentRequired: true,
    conversionTracking: true,
    ...overrides,
  }
}

/** What the Link answers for fullBody(): the body without the password, with hasPassword. */
export function expectedFromFull(b: ReturnType<typeof fullBody>) {
  const { password: _password, ...rest } = b
  return { ...rest, hasPassword: true }
}

/** Storage itself, raw on purpose: for checks of stored rows and columns no port shows (hashes, flags). */
export const sql = rawRows

/** Raw on purpose: a refused write must leave no row in any workspace, and no port counts across them. */
export async function countLinks(env: TestEnv, workspaceId?: string): Promise<number> {
  const [row] = workspaceId
    ? await sql<{ n: number }>(env, 'SELECT count(*) AS n FROM links WHERE workspace_id = ?', workspaceId)
    : await sql<{ n: number }>(env, 'SELECT count(*) AS n FROM links')
  return row!.n
}

export interface OutboxRow {
  type: string
  mode: 'live' | 'test'
  workspace_id: string
  data: any
}

/** Outbox rows of a workspace (oldest first), with data parsed. */
export async function outboxOf(env: TestEnv, workspaceId: string, type?: string): Promise<OutboxRow[]> {
  return (await storedEvents(env))
    .filter((e) => e.workspaceId === workspaceId && (!type || e.type === type))
    .map((e) => ({ type: e.type, mode: e.mode, workspace_id: e.workspaceId, data: e.data }))
}

/** A fresh workspace with an all-permission live key, and short-hands to call the links API with it. */
export async function account(env: TestEnv) {
  const acct = await bootstrapAccount(env.rt)
  const key = acct.apiKey.key
  const api = {
    key,
    workspaceId: acct.workspace.id,
    workspaceSlug: acct.workspace.slug,
    create: (json: unknown, k = key, headers: Record<string, string> = {}) => env.request('/v1/links', { method: 'POST', key: k, json, headers }),
    bulk: (json: unknown, k = key, headers: Record<string, string> = {}) => env.request('/v1/links/bulk', { method: 'POST', key: k, json, headers }),
    get: (id: string, query = '', k = key) => env.request(`/v1/links/${id}${query}`, { key: k }),
    list: (query = '', k = key) => env.request(`/v1/links${query}`, { key: k }),
    patch: (id: string, json: unknown, k = key) => env.request(`/v1/links/${id}`, { method: 'PATCH', key: k, json }),
    del: (id: string, k = key) => env.request(`/v1/links/${id}`, { method: 'DELETE', key: k }),
    /** A folder of the workspace (for folderId), written straight to storage so that it publishes no event of its own. */
    folder: () => newFolder(env, acct.workspace.id),
    /** Creates a link and answers its data, failing the test when it is not 201. */
    async make(json: Record<string, unknown> = {}, k = key): Promise<any> {
      const res = await api.create({ destinationUrl: 'https://example.com/', ...json }, k)
      const payload = await body(res)
      if (res.status !== 201) throw new Error(`create answered ${res.status}: ${JSON.stringify(payload)}`)
      return payload.data
    },
  }
  return api
}

let folders = 0
/** Raw on purpose: a folder row without the folder.created event the API would add to the outbox. */
export async function newFolder(env: TestEnv, workspaceId: string): Promise<string> {
  const id = `fld_links${++folders}${Math.random().toString(36).slice(2, 8)}`
  await sql(
    env,
    'INSERT INTO folders (id, workspace_id, name, description, created_at, updated_at) VALUES (?, ?, ?, NULL, ?, ?)',
    id,
    workspaceId,
    'Folder',
    1,
    1,
  )
  return id
}

/** Asserts a 400 validation_failed whose details.issues name `field`. */
export async function expectValidation(res: Response, field: string) {
  const payload = await body(res)
  expect({ status: res.status, code: payload.error?.code }).toEqual({ status: 400, code: 'validation_failed' })
  expect(payload.success).toBe(false)
  const paths: string[] = (payload.error.details?.issues ?? []).map((i: { path: string }) => i.path)
  expect(paths.some((p) => p === field || p.startsWith(`${field}.`))).toBe(true)
  return payload
}
