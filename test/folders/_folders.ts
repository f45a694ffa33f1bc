// Shared helpers of the folders tests (not a test file itself): a workspace with a live and a test key, and
// short-hands of the folders and links API.
import { expect } from 'bun:test'
import { body, bootstrapAccount, makeKey, storedEvents, type TestEnv } from '../helpers'

export async function account(env: TestEnv) {
  const acct = await bootstrapAccount(env.rt)
  const testKey = (await makeKey(env.rt, acct.workspace.slug, '*', 'test')).key
  const key = acct.apiKey.key
  const call = async (path: string, init: { method?: string; json?: unknown; key?: string } = {}) => {
    const res = await env.request(`/v1${path}`, { method: init.method ?? 'GET', key: init.key ?? key, json: init.json })
    return { status: res.status, body: await body(res) }
  }
  const api = {
    key,
    testKey,
    workspaceId: acct.workspace.id,
    workspaceSlug: acct.workspace.slug,
    call,
    /** Creates a folder and answers it, failing the test when it is not 201. */
    async folder(name: string, description?: string | null, k = key) {
      const res = await call('/folders', { method: 'POST', key: k, json: { name, ...(description !== undefined && { description }) } })
      expect(res.status).toBe(201)
      return res.body.data
    },
    /** Creates a link and answers it, failing the test when it is not 201. */
    async link(json: Record<string, unknown> = {}, k = key) {
      const res = await call('/links', { method: 'POST', key: k, json: { destinationUrl: 'https://example.com/', ...json } })
      if (res.status !== 201) throw new Error(`create answered ${res.status}: ${JSON.stringify(res.body)}`)
      return res.body.data
    },
  }
  return api
}

/** The workspace's events of these types, oldest first. */
export async function eventsOf(env: TestEnv, workspaceId: string, ...types: string[]) {
  return (await storedEvents(env)).filter((e) => e.workspaceId === workspaceId && (!types.length || types.includes(e.type)))
}

/** Asserts a 400 validation_failed whose details.issues name `field`. */
export function expectIssue(res: { status: number; body: any }, field: string) {
  expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 400, code: 'validation_failed' })
  const paths: string[] = (res.body.error.details?.issues ?? []).map((i: { path: string }) => i.path)
  expect(paths).toContain(field)
}
