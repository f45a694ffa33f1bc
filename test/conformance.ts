// Every response a test receives from lnk's API is checked against the served OpenAPI document: the operation
// is found by method and path, the status must be one it lists (or its `default`), the media type one it
// declares, and a JSON body must validate against the schema (Ajv, strict, formats on). A mismatch throws, so
// it fails the test that produced it: the whole suite is a conformance suite for the document.
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020'
import { createApp } from '../src/app'
import { loadConfig } from '../src/platform/config'
import { silentLogger } from '../src/platform/log'
import { buildDocument, DOCS_PATH, type OpenApiDoc } from '../src/modules/system/openapi'
import { createRuntime } from '../src/runtime'
import { rmSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

type Obj = Record<string, any>
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']

// Formats the document uses, checked as strictly as a client's validator would.
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/i
const FORMATS: Record<string, (value: string) => boolean> = {
  date: (v) => DATE.test(v) && !Number.isNaN(Date.parse(`${v}T00:00:00Z`)) && new Date(`${v}T00:00:00Z`).toISOString().startsWith(v),
  'date-time': (v) => DATE_TIME.test(v) && !Number.isNaN(Date.parse(v)),
  uri: (v) => {
    try {
      return /^[a-z][a-z0-9+.-]*:/i.test(v) && Boolean(new URL(v))
    } catch {
      return false
    }
  },
  uuid: (v) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v),
  email: (v) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v),
  ipv4: (v) => /^(\d{1,3})(\.\d{1,3}){3}$/.test(v),
  ipv6: (v) => v.includes(':'),
  hostname: (v) => /^[a-z0-9.-]+$/i.test(v),
}

export class Conformance {
  private readonly ajv: Ajv2020
  private readonly validators = new Map<string, ValidateFunction>()
  private readonly templates: { template: string; base: string; pattern: RegExp; params: number; item: Obj }[]

  constructor(readonly doc: OpenApiDoc) {
    this.ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true, validateFormats: true })
    this.ajv.addVocabulary(['example', 'xml', 'externalDocs', 'discriminator'])
    for (const [name, check] of Object.entries(FORMATS)) this.ajv.addFormat(name, check)
    // Components become $defs of one schema, and every $ref points there.
    this.ajv.addSchema({ $id: 'lnk', $defs: rewriteRefs(doc.components.schemas) as Obj })
    // A path is relative to its server: its own (the routes outside /v1 name the origin) or the document's.
    // The server's path (/v1, or none) is where the template starts in a request's path.
    const basePath = (servers: { url: string }[] | undefined) => new URL((servers ?? doc.servers)[0]!.url).pathname.replace(/\/+$/, '')
    this.templates = Object.entries(doc.paths).map(([template, item]) => ({
      template,
      base: basePath((item as Obj).servers),
      item: item as Obj,
      params: (template.match(/\{/g) ?? []).length,
      pattern: new RegExp(`^${template.replace(/[.+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
    }))
    // A fixed path wins over a templated one, as in the router (/links/bulk before /links/{id}).
    this.templates.sort((a, b) => a.params - b.params)
  }

  /**
   * The path item for a request path, or undefined when the document does not describe it: the template,
   * read under its server's path, must match what follows that path (so /v1/healthz is no operation, as for
   * a client that resolves each path against its server).
   */
  find(pathname: string): { template: string; item: Obj } | undefined {
    return this.templates.find((t) => (pathname === t.base || pathname.startsWith(`${t.base}/`)) && t.pattern.test(pathname.slice(t.base.length) || '/'))
  }

  /** Throws when `response` (to `method` `url`) is not what the document says. Reads a clone of the body. */
  async check(method: string, url: string, response: Response): Promise<void> {
    const { pathname } = new URL(url)
    const m = method.toLowerCase()
    if (m === 'options' || pathname === DOCS_PATH || pathname.startsWith(`${DOCS_PATH}/`)) return
    const where = `${method.toUpperCase()} ${pathname} → ${response.status}`
    const found = this.find(pathname)
    const inApi = pathname.startsWith('/v1/')
    if (!found && !inApi) return // a short link, a page: not part of the API
    const op: Obj | undefined = found?.item[m === 'head' ? 'get' : m]
    let declared: Obj | undefined
    if (!op) {
      // No operation: the router's own 404 or 405, which must be the error envelope.
      if (response.status !== 404 && response.status !== 405) throw new Error(`OpenAPI: ${where} has no operation in the document`)
      declared = { content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } }
    } else {
      declared = op.responses?.[String(response.status)] ?? (response.status >= 400 ? op.responses?.default : undefined)
      if (!declared)
        throw new Error(`OpenAPI: ${where}: status ${response.status} is not among the operation's responses (${Object.keys(op.responses ?? {}).join(', ')})`)
    }
    if (m === 'head' || response.status === 204 || response.status === 304) return
    const text = await response.clone().text()
    const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
    const content: Obj | undefined = declared.content
    if (!content) {
      if (text !== '') throw new Error(`OpenAPI: ${where}: the document declares no body, but one came (${type})`)
      return
    }
    const media = content[type] ?? content[`${type.split('/')[0]}/*`] ?? content['*/*']
    if (!media) throw new Error(`OpenAPI: ${where}: content type "${type}" is not declared (${Object.keys(content).join(', ')})`)
    if (!/json/.test(type) || !media.schema) return
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      throw new Error(`OpenAPI: ${where}: the body is not JSON: ${text.slice(0, 200)}`)
    }
    const validate = this.validator(media.schema)
    if (!validate(body)) {
      const errors = (validate.errors ?? []).slice(0, 8).map((e) => `${e.instancePath || '/'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`)
      throw new Error(`OpenAPI: ${where}: the body does not match the document:\n  ${errors.join('\n  ')}\n  body: ${text.slice(0, 600)}`)
    }
  }

  /**
   * What the document says of a request part, as a validator: the JSON body of `method` `template`
   * (`/api-keys`), or one of its query parameters. For tests that hold the server's verdict on a value next
   * to the document's.
   */
  requestValidator(method: string, template: string, part: { body: true } | { query: string }): ValidateFunction {
    const op: Obj | undefined = (this.doc.paths[template] as Obj | undefined)?.[method.toLowerCase()]
    if (!op) throw new Error(`OpenAPI: no operation ${method} ${template}`)
    const schema =
      'body' in part
        ? op.requestBody?.content?.['application/json']?.schema
        : op.parameters?.find((p: Obj) => p.in === 'query' && p.name === part.query)?.schema
    if (!schema) throw new Error(`OpenAPI: ${method} ${template} states no ${'body' in part ? 'JSON body' : `query parameter ${part.query}`}`)
    return this.validator(schema)
  }

  private validator(schema: Obj): ValidateFunction {
    const key = JSON.stringify(schema)
    let fn = this.validators.get(key)
    if (!fn) {
      fn = this.ajv.compile(rewriteRefs(schema) as Obj)
      this.validators.set(key, fn)
    }
    return fn
  }
}

function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs)
  if (typeof value !== 'object' || value === null) return value
  const out: Obj = {}
  for (const [k, v] of Object.entries(value)) {
    out[k] =
      k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/') ? `lnk#/$defs/${v.slice('#/components/schemas/'.length)}` : rewriteRefs(v)
  }
  return out
}

let shared: Conformance | undefined

/**
 * The document lnk serves, built once per test process the way the server builds it (a test in
 * test/system/openapi.test.ts checks that the served one is exactly this), without a request, so it never
 * shows up in a test's metrics or logs.
 */
export function conformance(): Conformance {
  if (shared) return shared
  const dir = mkdtempSync(join(tmpdir(), 'lnk-openapi-'))
  const config = loadConfig({ LNK_DATA_DIR: dir, LNK_BASE_URL: 'http://localhost:8080', LNK_LOG_LEVEL: 'silent' })
  const rt = createRuntime(config, { log: silentLogger })
  try {
    shared = new Conformance(buildDocument(createApp(rt), config.baseUrl))
  } finally {
    for (const handle of [rt.workerDb, rt.db]) handle.close()
    rmSync(dir, { recursive: true, force: true })
  }
  return shared
}

/**
 * What an lnk response carries that a test's own receivers and fakes do not: Service-Version on /v1, and
 * X-Request-Id on everything lnk answers, the routes outside /v1 (/healthz, /metrics…) included. Short links,
 * pages and the console carry it too; check() leaves alone what the document does not describe.
 */
export const isLnkApiResponse = (response: Response) => response.headers.has('service-version') || response.headers.has('x-request-id')

export { METHODS }
