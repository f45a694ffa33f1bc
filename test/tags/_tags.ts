// Shared helpers of the tags tests (not a test file itself): small requests and readers of stored links.
import { expect } from 'bun:test'
import { searchTextOf } from '../../src/modules/links/fields'
import { body, rawRows, type TestEnv } from '../helpers'

export async function createLink(env: TestEnv, key: string, json: Record<string, unknown>) {
  const res = await env.request('/v1/links', { method: 'POST', key, json: { destinationUrl: 'https://example.com/page', ...json } })
  expect(res.status).toBe(201)
  return (await body(res)).data
}

export async function listTags(env: TestEnv, key: string, query = '') {
  const res = await env.request(`/v1/tags${query}`, { key })
  expect(res.status).toBe(200)
  return (await body(res)).data as { id: string; name: string; color: string | null; linkCount: number }[]
}

export async function tagNamed(env: TestEnv, key: string, name: string) {
  return (await listTags(env, key, '?mode=all')).find((t) => t.name === name)
}

/** A link as stored: its tags JSON, its link_tags rows and its search text, checked against each other. */
export async function storedLink(env: TestEnv, id: string) {
  const [row] = await rawRows(env, 'SELECT slug, title, destination_url, tags, search_text, updated_at FROM links WHERE id = ?', id)
  const tags = JSON.parse(row.tags) as string[]
  const tagRows = (await rawRows(env, 'SELECT tag FROM link_tags WHERE link_id = ?', id)).map((r) => r.tag as string)
  expect([...tagRows].sort()).toEqual([...tags].sort())
  const expected = searchTextOf({ slug: row.slug, title: row.title, destinationUrl: row.destination_url, tags })
  expect(row.search_text).toBe(expected)
  return { tags, searchText: row.search_text as string, updatedAt: Number(row.updated_at) }
}
