// A generated client works against the served document (issue 11): lnk listens on a real port, its
// /v1/openapi.json is turned into TypeScript types by openapi-typescript (programmatic API), a small client
// program written against those types with openapi-fetch's createClient<paths> is type-checked by the
// project's tsc (so a call the document does not allow fails here), and then that same program runs, with the
// base URL the document names (servers[0].url, the spec's {base_url}), to create, read, update, list and
// delete a link.
//
// openapi-typescript needs TypeScript 5's compiler API (the project's TypeScript 7 has none in JavaScript): it
// comes through test/setup/openapi-typescript-ts5, a local package that holds it next to typescript 5.9.3.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import openapiTS, { astToString } from 'openapi-typescript-ts5'
import { bootstrapAccount, ROOT, tempDir } from '../helpers'
import { startLnk, type Lnk } from '../redirect/_server'

let lnk: Lnk
let dir: string
let doc: any
let apiKey: string

beforeAll(async () => {
  lnk = await startLnk()
  dir = tempDir('lnk-generated-client-')
  apiKey = (await bootstrapAccount(lnk.env.rt, 'Generated client')).apiKey.key
  const res = await fetch(`${lnk.origin}/v1/openapi.json`)
  expect(res.status).toBe(200)
  doc = await res.json()
})
afterAll(async () => {
  await lnk?.stop()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

// The client program: every call goes through the generated `paths`, and the values it hands back are read
// through the generated response types, so both the requests and the responses are checked by tsc.
const CLIENT = `import createClient from 'openapi-fetch'
import type { paths } from './schema'

export function lnkClient(baseUrl: string, apiKey: string) {
  return createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${apiKey}\` } })
}
type Client = ReturnType<typeof lnkClient>

function must<T>(step: string, r: { data?: T; error?: unknown; response: Response }): T {
  if (r.data === undefined) throw new Error(\`\${step}: HTTP \${r.response.status} \${JSON.stringify(r.error)}\`)
  return r.data
}

export async function lifecycle(client: Client, slug: string) {
  const created = await client.POST('/links', {
    body: { destinationUrl: 'https://example.com/generated-client', slug, title: 'Made by a generated client', tags: ['generated'] },
  })
  const link = must('create', created).data
  const id: string = link.id
  const shortUrl: string = link.shortUrl

  const read = await client.GET('/links/{id}', { params: { path: { id } } })
  const readLink = must('read', read).data

  const updated = await client.PATCH('/links/{id}', {
    params: { path: { id } },
    body: { title: 'Renamed by a generated client', destinationUrl: 'https://example.com/generated-client/v2', tags: ['generated', 'patched'] },
  })
  const updatedLink = must('update', updated).data

  const listed = await client.GET('/links', { params: { query: { page: 1, perPage: 10, search: slug } } })
  const list = must('list', listed)
  // Paged by number here, so the page's counts are there (a cursor walk answers nextCursor alone).
  const total: number = list.meta.pagination?.total ?? -1
  const listedIds: string[] = list.data.map((l) => l.id)

  const deleted = await client.DELETE('/links/{id}', { params: { path: { id } } })
  const gone: true = must('delete', deleted).data.deleted

  const after = await client.GET('/links/{id}', { params: { path: { id } } })
  const afterCode: string | undefined = after.error?.error.code

  return {
    created: { status: created.response.status, id, shortUrl, slug: link.slug, title: link.title, tags: link.tags },
    read: { status: read.response.status, id: readLink.id, destinationUrl: readLink.destinationUrl },
    updated: { status: updated.response.status, title: updatedLink.title, destinationUrl: updatedLink.destinationUrl, tags: updatedLink.tags },
    listed: { status: listed.response.status, total, ids: listedIds },
    deleted: { status: deleted.response.status, gone },
    after: { status: after.response.status, code: afterCode },
  }
}
`

// A route outside /v1, through the same generated types: the client's base URL is the path's own server.
const ROOT_CLIENT = `import createClient from 'openapi-fetch'
import type { paths } from './schema'

export async function health(origin: string) {
  const client = createClient<paths>({ baseUrl: origin })
  const live = await client.GET('/healthz')
  const ready = await client.GET('/readyz')
  const liveStatus: 'ok' | undefined = live.data?.status
  const readyStatus: 'ready' | undefined = ready.data?.status
  return { live: [live.response.status, liveStatus], ready: [ready.response.status, readyStatus] }
}
`

// Calls the document does not allow: each must be a type error, or tsc reports the unused @ts-expect-error.
// They show that the generated types really constrain the calls (they are not \`any\`).
const MISTAKES = `import type { lnkClient } from './client'

export async function mistakes(client: ReturnType<typeof lnkClient>) {
  // @ts-expect-error paths are relative to the server URL, which already ends in /v1
  await client.GET('/v1/links', {})
  // @ts-expect-error destinationUrl is required
  await client.POST('/links', { body: { slug: 'no-destination' } })
  // @ts-expect-error the link id is a path parameter
  await client.GET('/links/{id}', {})
  // @ts-expect-error links are changed with PATCH, not PUT
  await client.PUT('/links/{id}', { params: { path: { id: 'x' } }, body: {} })
}
`

async function tsc(project: string) {
  const proc = Bun.spawn([process.execPath, join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project, '--pretty', 'false'], {
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { code, output: `${stdout}${stderr}`.trim() }
}

test('the document names its server: LNK_BASE_URL/v1, and the links paths relative to it', () => {
  expect(doc.servers?.[0]?.url).toBe(`${lnk.origin}/v1`)
  expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/links', '/links/{id}']))
})

// The routes outside /v1 carry the origin as their own server (openapi.ts, relativePaths): a client that
// resolves each path against its server reaches them, one that puts every path under servers[0] gets 404.
test('every path outside /v1 names the origin as its server, and answers there, not under /v1', async () => {
  const rooted = Object.entries<any>(doc.paths).filter(([, item]) => item.servers)
  expect(rooted.map(([path]) => path).sort()).toEqual(['/.well-known/lnk/{token}', '/healthz', '/internal/tls/ask', '/metrics', '/readyz'])
  for (const [path, item] of rooted) {
    expect({ path, servers: item.servers }).toEqual({ path, servers: [{ url: lnk.origin }] })
    // A path without parameters is called as written; the others get a value that exists nowhere.
    const concrete = path.replace('{token}', 'no-such-token')
    const query = path === '/internal/tls/ask' ? '?domain=unknown.example.com' : ''
    // The router's "no such route" (404, the JSON envelope) only where a client ignoring the path's server
    // would call; at the right place the route answers (the unknown token's 404 is its own, in plain text).
    const noRoute = async (res: Response) => {
      const text = await res.text()
      return res.status === 404 && (res.headers.get('content-type') ?? '').startsWith('application/json') && JSON.parse(text).error?.code === 'not_found'
    }
    const right = await noRoute(await fetch(`${item.servers[0].url}${concrete}${query}`))
    const wrong = await noRoute(await fetch(`${doc.servers[0].url}${concrete}${query}`))
    expect({ path, right, wrong }).toEqual({ path, right: false, wrong: true })
  }
})

test('openapi-typescript + openapi-fetch: the generated client type-checks and creates, reads, updates, lists and deletes a link', async () => {
  // 1. Types from the served document.
  const ast = await openapiTS(structuredClone(doc))
  const schema = astToString(ast)
  expect(schema).toContain('export interface paths')
  writeFileSync(join(dir, 'schema.d.ts'), schema)
  writeFileSync(join(dir, 'client.ts'), CLIENT)
  writeFileSync(join(dir, 'mistakes.ts'), MISTAKES)
  writeFileSync(join(dir, 'root.ts'), ROOT_CLIENT)
  // openapi-fetch (and the rest) resolve from the repository's node_modules.
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir')
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ESNext',
        module: 'ESNext',
        moduleResolution: 'bundler',
        lib: ['ESNext', 'DOM'],
        types: [],
        strict: true,
        noUncheckedIndexedAccess: true,
        noEmit: true,
        skipLibCheck: false,
      },
      files: ['schema.d.ts', 'client.ts', 'mistakes.ts', 'root.ts'],
    }),
  )

  // 2. The project's tsc (TypeScript 7) checks the program against the generated types.
  const checked = await tsc(join(dir, 'tsconfig.json'))
  expect(checked).toEqual({ code: 0, output: '' })

  // 3. The same program runs against the listening server, at the URL the document names.
  const { lnkClient, lifecycle } = await import(join(dir, 'client.ts'))
  const baseUrl: string = doc.servers[0].url
  const result = await lifecycle(lnkClient(baseUrl, apiKey), 'gen-client')

  expect(result.created).toEqual({
    status: 201,
    id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    shortUrl: expect.stringMatching(/\/gen-client$/),
    slug: 'gen-client',
    title: 'Made by a generated client',
    tags: ['generated'],
  })
  const id = result.created.id
  expect(result.read).toEqual({ status: 200, id, destinationUrl: 'https://example.com/generated-client' })
  expect(result.updated).toEqual({
    status: 200,
    title: 'Renamed by a generated client',
    destinationUrl: 'https://example.com/generated-client/v2',
    tags: ['generated', 'patched'],
  })
  expect(result.listed).toEqual({ status: 200, total: 1, ids: [id] })
  expect(result.deleted).toEqual({ status: 200, gone: true })
  expect(result.after).toEqual({ status: 404, code: 'not_found' })

  // 4. A root route, at the server its path names.
  const { health } = await import(join(dir, 'root.ts'))
  expect(await health(doc.paths['/healthz'].servers[0].url)).toEqual({ live: [200, 'ok'], ready: [200, 'ready'] })
}, 60_000)
