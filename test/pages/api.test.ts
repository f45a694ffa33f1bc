// Bridge pages through HTTP: pages (create empty or from a template, slugs, themes, layout, versions,
// delete), blocks (append with defaults and placement, the flat reading order, merge-patch updates, the
// immutable type, delete 204), block types, templates (public, filtered, paged), saved templates, events,
// permissions and the sandbox of test keys. Every answer is checked against the OpenAPI document.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { BLOCK_TYPES } from '../../src/modules/pages/blocks'
import { BUILTIN_TEMPLATES } from '../../src/modules/pages/templates'
import { body, bootstrapAccount, makeKey, setup, storedEvents, type TestEnv } from '../helpers'

let env: TestEnv
let key: string
let workspaceId: string

beforeAll(async () => {
  env = await setup()
  const account = await bootstrapAccount(env.rt)
  key = account.apiKey.key
  workspaceId = account.workspace.id
})
afterAll(() => env.cleanup())

const api = (path: string, init: RequestInit & { json?: unknown; key?: string } = {}) => env.request(`/v1${path}`, { key, ...init })
const post = (path: string, json: unknown, k = key) => api(path, { method: 'POST', json, key: k })
const patch = (path: string, json: unknown, k = key) => api(path, { method: 'PATCH', json, key: k })
const del = (path: string, k = key) => api(path, { method: 'DELETE', key: k })

async function newPage(json: Record<string, unknown> = {}, k = key) {
  const res = await post('/bridge-pages', json, k)
  const payload = await body(res)
  expect({ status: res.status, error: payload.error }).toEqual({ status: 201, error: undefined })
  return payload.data
}

async function refusal(res: Response) {
  const payload = await body(res)
  return {
    status: res.status,
    code: payload.error?.code as string,
    paths: (payload.error?.details?.issues ?? []).map((i: { path: string }) => i.path) as string[],
    message: payload.error?.message as string,
  }
}

/** The data of the events of `type` published so far, in order. */
const outboxOf = async (type: string) => (await storedEvents(env)).filter((e) => e.type === type).map((e) => e.data)

describe('pages', () => {
  test('an empty page: slug from the title, default theme, the public URL, version 1, no sections', async () => {
    const page = await newPage({ title: 'Spring Sale — Ünïcode!' })
    expect(page).toMatchObject({
      title: 'Spring Sale — Ünïcode!',
      slug: 'spring-sale-unicode',
      domain: 'localhost:8080',
      url: 'http://localhost:8080/p/spring-sale-unicode',
      lang: 'en',
      isTest: false,
      version: 1,
      blockCount: 0,
      views: 0,
      buttonClicks: 0,
      templateSlug: null,
      sections: [],
    })
    expect(page.id).toMatch(/^bp_/)
    // The same title again gets a slug of its own.
    const again = await newPage({ title: 'Spring Sale — Ünïcode!' })
    expect(again.slug).toMatch(/^spring-sale-unicode-[a-z0-9]{5}$/)
    const listed = await body(await api('/bridge-pages?perPage=1'))
    expect(listed.meta.pagination).toMatchObject({ page: 1, perPage: 1 })
    expect(listed.meta.pagination.total).toBeGreaterThanOrEqual(2)
    expect(listed.data[0].id).toBe(again.id)
  })

  test('a slug in use on the domain is 409 slug_taken; bad slugs, themes and both template kinds are named', async () => {
    await newPage({ slug: 'taken-one' })
    expect(await refusal(await post('/bridge-pages', { slug: 'taken-one' }))).toMatchObject({ status: 409, code: 'slug_taken' })
    expect(await refusal(await post('/bridge-pages', { slug: 'Bad Slug' }))).toMatchObject({ status: 400, code: 'validation_failed', paths: ['slug'] })
    const lowContrast = {
      light: { background: '#ffffff', text: '#eeeeee', accent: '#0b57d0', accentText: '#ffffff' },
      dark: { background: '#111111', text: '#eeeeee', accent: '#8ab4f8', accentText: '#0b1d3a' },
      font: 'system',
      buttonShape: 'rounded',
    }
    const bad = await refusal(
      await post('/bridge-pages', { theme: lowContrast, templateSlug: 'link-in-bio', savedTemplateId: 'tpl_x', domain: 'elsewhere.example' }),
    )
    expect(bad.status).toBe(400)
    expect(bad.paths).toEqual(expect.arrayContaining(['savedTemplateId', 'domain', 'theme.light.text']))
    expect(await refusal(await post('/bridge-pages', { templateSlug: 'no-such-template' }))).toMatchObject({ status: 400, paths: ['templateSlug'] })
  })

  test('from a built-in template: its title, theme and blocks with new ids, in its layouts', async () => {
    const template = BUILTIN_TEMPLATES[0]!
    const page = await newPage({ templateSlug: template.slug })
    expect(page).toMatchObject({ templateSlug: template.slug, title: template.title, theme: template.theme })
    expect(page.sections.map((s: { layout: string }) => s.layout)).toEqual(template.sections.map((s) => s.layout))
    const ids = page.sections.flatMap((s: any) => [s.id, ...s.columns.flatMap((c: any) => [c.id, ...c.blocks.map((b: any) => b.id)])])
    expect(new Set(ids).size).toBe(ids.length)
    expect(page.blockCount).toBeGreaterThan(0)
    const detail = await body(await api(`/templates/${template.slug}`))
    expect(page.sections.map((s: any) => s.columns.map((c: any) => c.blocks.map((b: any) => [b.type, b.fields])))).toEqual(
      detail.data.sections.map((s: any) => s.columns.map((c: any) => c.blocks.map((b: any) => [b.type, b.fields]))),
    )
  })

  test('PATCH changes only what is sent; version bumps; an old version is 409 conflict; DELETE removes it', async () => {
    const page = await newPage({ title: 'Patch me' })
    const res = await patch(`/bridge-pages/${page.id}`, { title: 'Patched', description: 'About this page', lang: 'pt-BR', version: 1 })
    const changed = (await body(res)).data
    expect(changed).toMatchObject({ title: 'Patched', description: 'About this page', lang: 'pt-BR', slug: page.slug, version: 2 })
    expect(await refusal(await patch(`/bridge-pages/${page.id}`, { title: 'Stale', version: 1 }))).toMatchObject({ status: 409, code: 'conflict' })
    expect((await body(await api(`/bridge-pages/${page.id}`))).data.title).toBe('Patched')
    expect((await body(await patch(`/bridge-pages/${page.id}`, { description: null }))).data.description).toBeNull()
    expect((await body(await del(`/bridge-pages/${page.id}`))).data).toEqual({ id: page.id, deleted: true })
    expect((await api(`/bridge-pages/${page.id}`)).status).toBe(404)
    const events = (await outboxOf('bridge_page.updated')).filter((e) => e.id === page.id)
    expect(events.map((e) => [e.version, e.changes])).toEqual([
      [2, ['title', 'description', 'lang']],
      [3, ['description']],
    ])
    expect((await outboxOf('bridge_page.deleted')).map((e) => e.id)).toContain(page.id)
    expect((await outboxOf('bridge_page.created')).map((e) => e.id)).toContain(page.id)
  })
})

describe('blocks', () => {
  test('appending to an empty page makes one full-width section; defaults are overlaid; id and type in fields are ignored', async () => {
    const page = await newPage({ title: 'Blocks' })
    const res = await post(`/bridge-pages/${page.id}/blocks`, { type: 'heading', fields: { text: 'Hello', id: 'blk_mine', type: 'button' } })
    expect(res.status).toBe(201)
    const block = (await body(res)).data
    const defaults = BLOCK_TYPES.find((b) => b.type === 'heading')!.defaults
    expect(block).toMatchObject({ type: 'heading', fields: { ...defaults, text: 'Hello' }, index: 0, position: 0 })
    expect(block.id).toMatch(/^blk_/)
    expect(block.id).not.toBe('blk_mine')
    const tree = (await body(await api(`/bridge-pages/${page.id}`))).data
    expect(tree.sections).toHaveLength(1)
    expect(tree.sections[0]).toMatchObject({ layout: 'full', columns: [{ width: 12, blocks: [{ id: block.id }] }] })
    expect(tree.version).toBe(2)
  })

  test('the flat list is in reading order across sections and columns, with index, sectionId, columnId and position', async () => {
    const page = await newPage({ title: 'Order' })
    const a = (await body(await post(`/bridge-pages/${page.id}/blocks`, { type: 'heading', fields: { text: 'A' } }))).data
    // Two columns below, filled right column first to show order is by place, not by age.
    const arranged = (
      await body(
        await patch(`/bridge-pages/${page.id}`, {
          layout: [
            { id: a.sectionId, layout: 'full', columns: [[a.id]] },
            { layout: '1-1', columns: [[], []] },
          ],
        }),
      )
    ).data
    const second = arranged.sections[1]
    expect(second.columns.map((c: { width: number }) => c.width)).toEqual([6, 6])
    const right = (await body(await post(`/bridge-pages/${page.id}/blocks`, { type: 'text', sectionId: second.id, columnId: second.columns[1].id }))).data
    const left = (await body(await post(`/bridge-pages/${page.id}/blocks`, { type: 'divider', columnId: second.columns[0].id }))).data
    const top = (await body(await post(`/bridge-pages/${page.id}/blocks`, { type: 'spacer', columnId: second.columns[0].id, position: 0 }))).data
    const list = (await body(await api(`/bridge-pages/${page.id}/blocks`))).data
    expect(list.map((b: any) => [b.id, b.index, b.sectionId, b.columnId, b.position])).toEqual([
      [a.id, 0, a.sectionId, a.columnId, 0],
      [top.id, 1, second.id, second.columns[0].id, 0],
      [left.id, 2, second.id, second.columns[0].id, 1],
      [right.id, 3, second.id, second.columns[1].id, 0],
    ])
    expect((await body(await api(`/bridge-pages/${page.id}/blocks/${left.id}`))).data).toMatchObject({ id: left.id, index: 2 })
    // A bad place is named.
    expect(await refusal(await post(`/bridge-pages/${page.id}/blocks`, { type: 'text', columnId: 'col_nope' }))).toMatchObject({
      status: 400,
      paths: ['columnId'],
    })
    expect(await refusal(await post(`/bridge-pages/${page.id}/blocks`, { type: 'text', columnId: second.columns[1].id, position: 5 }))).toMatchObject({
      status: 400,
      paths: ['position'],
    })
    // A re-arrangement must place every block exactly once.
    const lost = await refusal(await patch(`/bridge-pages/${page.id}`, { layout: [{ layout: 'full', columns: [[a.id, a.id]] }] }))
    expect(lost).toMatchObject({ status: 400, code: 'validation_failed' })
    expect(lost.paths).toEqual(expect.arrayContaining(['layout.0.columns.0.1', 'layout']))
    expect((await body(await api(`/bridge-pages/${page.id}/blocks`))).data).toHaveLength(4)
  })

  test('an unknown type is 400 unknown_block_type; bad fields are named under fields; nothing is written', async () => {
    const page = await newPage()
    expect(await refusal(await post(`/bridge-pages/${page.id}/blocks`, { type: 'carousel' }))).toMatchObject({ status: 400, code: 'unknown_block_type' })
    const bad = await refusal(await post(`/bridge-pages/${page.id}/blocks`, { type: 'button', fields: { url: 'javascript:alert(1)', colour: 'red' } }))
    expect(bad).toMatchObject({ status: 400, code: 'validation_failed' })
    expect(bad.paths.every((p) => p.startsWith('fields'))).toBe(true)
    const after = (await body(await api(`/bridge-pages/${page.id}`))).data
    expect({ version: after.version, sections: after.sections }).toEqual({ version: 1, sections: [] })
  })

  test('PATCH merges fields (null restores the default); another type is 400 block_type_immutable; DELETE is 204', async () => {
    const page = await newPage()
    const block = (
      await body(await post(`/bridge-pages/${page.id}/blocks`, { type: 'button', fields: { label: 'Shop now', url: 'https://shop.example.com/' } }))
    ).data
    const defaults = BLOCK_TYPES.find((b) => b.type === 'button')!.defaults
    const merged = (await body(await patch(`/bridge-pages/${page.id}/blocks/${block.id}`, { url: 'https://shop.example.com/sale', type: 'button' }))).data
    expect(merged.fields).toEqual({ ...defaults, label: 'Shop now', url: 'https://shop.example.com/sale' })
    const restored = (await body(await patch(`/bridge-pages/${page.id}/blocks/${block.id}`, { label: null }))).data
    expect(restored.fields.label).toBe(defaults.label)
    expect(await refusal(await patch(`/bridge-pages/${page.id}/blocks/${block.id}`, { type: 'heading', label: 'x' }))).toMatchObject({
      status: 400,
      code: 'block_type_immutable',
    })
    expect((await body(await api(`/bridge-pages/${page.id}/blocks/${block.id}`))).data.fields.label).toBe(defaults.label)
    const gone = await del(`/bridge-pages/${page.id}/blocks/${block.id}`)
    expect(gone.status).toBe(204)
    expect(await gone.text()).toBe('')
    expect((await api(`/bridge-pages/${page.id}/blocks/${block.id}`)).status).toBe(404)
    expect((await del(`/bridge-pages/${page.id}/blocks/${block.id}`)).status).toBe(404)
  })

  test("a button may name a link of the workspace, in the page's mode; another workspace's link is refused", async () => {
    const page = await newPage()
    const link = (await body(await post('/links', { destinationUrl: 'https://example.com/landing' }))).data
    const ok = await post(`/bridge-pages/${page.id}/blocks`, { type: 'button', fields: { label: 'Go', url: null, linkId: link.id } })
    expect(ok.status).toBe(201)
    const other = await bootstrapAccount(env.rt)
    const foreign = (await body(await post('/links', { destinationUrl: 'https://example.com/x' }, other.apiKey.key))).data
    const refused = await refusal(await post(`/bridge-pages/${page.id}/blocks`, { type: 'button', fields: { label: 'Go', url: null, linkId: foreign.id } }))
    expect(refused).toMatchObject({ status: 400, code: 'validation_failed', paths: ['fields.linkId'] })
  })

  test('block types list every type with its schema and defaults that validate', async () => {
    const types = (await body(await api('/bridge-pages/block-types'))).data
    expect(types.map((t: { type: string }) => t.type)).toEqual([
      'profile',
      'heading',
      'text',
      'button',
      'social_links',
      'image',
      'video',
      'divider',
      'spacer',
      'contact',
    ])
    for (const t of types) expect(t.schema.type).toBe('object')
  })
})

describe('templates', () => {
  test('public: listed with pagination meta, filtered by category, tag and q; one by slug with its tree', async () => {
    const all = await body(await env.request('/v1/templates'))
    expect(all.meta.pagination).toEqual({ page: 1, perPage: 20, total: BUILTIN_TEMPLATES.length, totalPages: 1 })
    expect(all.data.map((t: { slug: string }) => t.slug)).toEqual(BUILTIN_TEMPLATES.map((t) => t.slug))
    const paged = await body(await env.request('/v1/templates?limit=3&offset=3'))
    expect(paged.meta.pagination).toEqual({ page: 2, perPage: 3, total: BUILTIN_TEMPLATES.length, totalPages: Math.ceil(BUILTIN_TEMPLATES.length / 3) })
    expect(paged.data.map((t: { slug: string }) => t.slug)).toEqual(BUILTIN_TEMPLATES.slice(3, 6).map((t) => t.slug))
    const category = BUILTIN_TEMPLATES[1]!.category
    const byCategory = (await body(await env.request(`/v1/templates?category=${category}`))).data
    expect(byCategory.length).toBeGreaterThan(0)
    expect(byCategory.every((t: { category: string }) => t.category === category)).toBe(true)
    const tag = BUILTIN_TEMPLATES[2]!.tags[0]!
    expect((await body(await env.request(`/v1/templates?tag=${encodeURIComponent(tag)}`))).data.map((t: { slug: string }) => t.slug)).toContain(
      BUILTIN_TEMPLATES[2]!.slug,
    )
    const q = BUILTIN_TEMPLATES[3]!.name.split(' ')[0]!.toUpperCase()
    expect((await body(await env.request(`/v1/templates?q=${encodeURIComponent(q)}`))).data.map((t: { slug: string }) => t.slug)).toContain(
      BUILTIN_TEMPLATES[3]!.slug,
    )
    const one = await body(await env.request(`/v1/templates/${BUILTIN_TEMPLATES[0]!.slug}`))
    expect(one.data).toMatchObject({ slug: BUILTIN_TEMPLATES[0]!.slug, theme: BUILTIN_TEMPLATES[0]!.theme })
    expect(one.data.sections.length).toBe(BUILTIN_TEMPLATES[0]!.sections.length)
    expect((await env.request('/v1/templates/nope')).status).toBe(404)
    expect((await env.request('/v1/templates?limit=0')).status).toBe(400)
  })

  test('a page saved as a template starts new pages with its blocks; saved templates are private', async () => {
    const page = await newPage({ title: 'Save me' })
    await post(`/bridge-pages/${page.id}/blocks`, { type: 'heading', fields: { text: 'Kept' } })
    const saved = await post('/saved-templates', { pageId: page.id, name: 'Mine' })
    expect(saved.status).toBe(201)
    const tpl = (await body(saved)).data
    expect(tpl).toMatchObject({ name: 'Mine', sourcePageId: page.id, title: 'Save me', blockCount: 1 })
    const copy = await newPage({ savedTemplateId: tpl.id })
    expect(copy).toMatchObject({ savedTemplateId: tpl.id, title: 'Save me', blockCount: 1 })
    expect(copy.sections[0].columns[0].blocks[0].fields.text).toBe('Kept')
    expect((await body(await api('/saved-templates'))).data.map((t: { id: string }) => t.id)).toContain(tpl.id)
    const other = await bootstrapAccount(env.rt)
    expect(await refusal(await post('/bridge-pages', { savedTemplateId: tpl.id }, other.apiKey.key))).toMatchObject({ status: 400, paths: ['savedTemplateId'] })
    expect((await body(await del(`/saved-templates/${tpl.id}`))).data).toEqual({ id: tpl.id, deleted: true })
    expect((await del(`/saved-templates/${tpl.id}`)).status).toBe(404)
  })
})

describe('keys', () => {
  test('pages:read reads but does not write; no credential is 401; a test key sees and makes test pages only', async () => {
    const live = await newPage({ title: 'Live only' })
    const reader = (await makeKey(env.rt, workspaceId, 'pages:read')).key
    expect((await api('/bridge-pages', { key: reader })).status).toBe(200)
    expect(await refusal(await post('/bridge-pages', {}, reader))).toMatchObject({ status: 403, code: 'forbidden' })
    expect((await env.request('/v1/bridge-pages')).status).toBe(401)
    const testKey = (await makeKey(env.rt, workspaceId, '*', 'test')).key
    const sandboxed = await newPage({ title: 'Sandbox' }, testKey)
    expect(sandboxed.isTest).toBe(true)
    expect((await api(`/bridge-pages/${live.id}`, { key: testKey })).status).toBe(404)
    const listed = (await body(await api('/bridge-pages?perPage=100', { key: testKey }))).data
    expect(listed.every((p: { isTest: boolean }) => p.isTest)).toBe(true)
    expect(await refusal(await api('/bridge-pages?mode=live', { key: testKey }))).toMatchObject({ status: 403 })
  })
})

describe('concurrent editors', () => {
  test('twelve appends at once all land, in some order, each with its own version; nothing is lost', async () => {
    const page = await newPage({ title: 'Busy' })
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => post(`/bridge-pages/${page.id}/blocks`, { type: 'heading', fields: { text: `H${i}` } })),
    )
    expect(results.map((r) => r.status)).toEqual(Array(12).fill(201))
    const after = (await body(await api(`/bridge-pages/${page.id}`))).data
    expect(after.version).toBe(13)
    const texts = after.sections.flatMap((s: any) => s.columns.flatMap((c: any) => c.blocks.map((b: any) => b.fields.text)))
    expect(texts.sort()).toEqual(Array.from({ length: 12 }, (_, i) => `H${i}`).sort())
  })
})

describe('the OpenAPI document', () => {
  test("shows every pages route and every block type's schema, referenced from a block's fields", async () => {
    const doc = await body(await env.request('/v1/openapi.json'))
    for (const path of [
      '/bridge-pages',
      '/bridge-pages/block-types',
      '/bridge-pages/{id}',
      '/bridge-pages/{pageId}/blocks',
      '/bridge-pages/{pageId}/blocks/{blockId}',
      '/templates',
      '/templates/{slug}',
      '/saved-templates',
      '/saved-templates/{id}',
    ]) {
      expect(doc.paths[path]).toBeDefined()
    }
    expect(
      Object.keys(doc.paths['/bridge-pages/{id}'])
        .filter((m) => ['get', 'patch', 'delete'].includes(m))
        .sort(),
    ).toEqual(['delete', 'get', 'patch'])
    expect(doc.paths['/bridge-pages/{id}'].get.parameters.filter((p: { in: string }) => p.in === 'path').map((p: { name: string }) => p.name)).toEqual(['id'])
    const refs = JSON.stringify(doc.paths['/bridge-pages/{pageId}/blocks'].get.responses['200'])
    for (const type of BLOCK_TYPES) {
      const schema = doc.components.schemas[`BlockFields_${type.type}`]
      expect({ type: type.type, schema: schema?.type }).toEqual({ type: type.type, schema: 'object' })
      expect(refs).toContain(`#/components/schemas/BlockFields_${type.type}`)
    }
    expect(doc.paths['/bridge-pages/{pageId}/blocks/{blockId}'].delete.responses['204']).toBeDefined()
  })
})
