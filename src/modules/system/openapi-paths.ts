// Steps 6 and 7 of polishDocument (openapi-polish.ts): the paths named as the spec names them, operation ids
// made identifiers, and the paths made relative to the server.
import { HTTP_METHODS, isObj, type OpenApiDoc, type PathItem } from './openapi-document'

/**
 * Path parameters published under another name than the router's. Elysia's router takes one name per place
 * in a path, so the page is `:pageId` under /bridge-pages (the spec's name in /bridge-pages/{pageId}/blocks),
 * while the contract names the page's own routes /bridge-pages/{id}.
 */
export const PUBLISHED_PARAMS: Record<string, Record<string, string>> = { '/v1/bridge-pages/{pageId}': { pageId: 'id' } }

function publishedPath(path: string, item: PathItem): [string, PathItem] {
  const renames = PUBLISHED_PARAMS[path]
  if (!renames) return [path, item]
  for (const method of HTTP_METHODS) {
    for (const p of item[method]?.parameters ?? []) if (p.in === 'path' && renames[p.name]) p.name = renames[p.name]
  }
  return [path.replace(/\{(\w+)\}/g, (whole, name: string) => (renames[name] ? `{${renames[name]}}` : whole)), item]
}

/** Step 6. */
export function tidyPathsAndIds(doc: OpenApiDoc) {
  const paths: Record<string, PathItem> = {}
  for (const [raw, rawItem] of Object.entries(doc.paths)) {
    const [path, item] = publishedPath(raw.length > 1 ? raw.replace(/\/+$/, '') : raw, rawItem)
    const name = path
    paths[name] = { ...item, ...paths[name] }
  }
  doc.paths = paths
  const used = new Set<string>()
  for (const item of Object.values(doc.paths)) {
    for (const method of HTTP_METHODS) {
      const op = item[method]
      if (!isObj(op) || typeof op.operationId !== 'string') continue
      const base = op.operationId.replace(/[^A-Za-z0-9_]+([A-Za-z0-9_]?)/g, (_: string, c: string) => c.toUpperCase())
      let id = base
      for (let n = 2; used.has(id); n++) id = `${base}${n}`
      used.add(id)
      op.operationId = id
    }
  }
}

/**
 * Step 7. Paths are relative to the server, `{base_url}` = LNK_BASE_URL/v1 as the spec says, so a client
 * configured per the spec calls /links, not /v1/v1/links.
 *
 * The routes outside /v1 (/healthz, /readyz, /metrics, /internal/tls/ask, /.well-known/lnk/{token}) stay in
 * the document, each with the origin (LNK_BASE_URL) as a path-level server, rather than being left out:
 * their answers are part of the contract (readiness's 503 body, the proof format of the domain check) and
 * the test suite validates them against this document like every other answer. OpenAPI 3.1 lets a path
 * item name its own servers, and a client that honours them (Schemathesis without --url, openapi-fetch
 * created with that server as its baseUrl) reaches them; one that puts every path under servers[0] would
 * call /v1/healthz, which is 404. test/system/generated-client.test.ts and test/conformance.ts hold both.
 */
export function relativePaths(doc: OpenApiDoc) {
  const origin = doc.servers[0]!.url.replace(/\/v1$/, '')
  doc.paths = Object.fromEntries(
    Object.entries(doc.paths).map(([path, item]) => (path.startsWith('/v1/') ? [path.slice(3), item] : [path, { servers: [{ url: origin }], ...item }])),
  )
}
