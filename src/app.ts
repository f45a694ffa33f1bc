// createApp(rt): the Elysia root used by the server and by the tests. It owns what every request shares:
// request id, body limits and JSON parsing, Service-Version, the error envelope, request logs and metrics.
// Feature areas are plugged in as modules.
import { Elysia, ValidationError } from 'elysia'
import { AppError, pointerToPath, type ValidationIssue } from './platform/errors'
import { releaseIdempotent } from './http/idempotency'
import { parseJsonBody, readBodyCapped, refuseNulInUrl, tooLarge } from './http/body'
import { statusOf } from './http/status'
import { errorBody } from './http/envelope'
import { beginRequest, requestState } from './http/request-context'
import { CURRENT_VERSION, resolveVersion } from './http/version'
import type { Module } from './modules/module'
import type { Runtime } from './runtime'

async function withRequestId(response: Response | Promise<Response>, id: string) {
  const res = await response
  res.headers.set('x-request-id', id)
  return res
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i
/** Routes that parse non-JSON bodies themselves (the conversion beacon: what navigator.sendBeacon sends). */
const isOwnParserPath = (url: string) => /^[a-z]+:\/\/[^/]+\/v1\/conversions\/?(?:\?|$)/i.test(url)

/** The values a union of literals (and null) allows, or undefined when the schema is something else. */
function allowedValues(schema: unknown): unknown[] | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined
  const s = schema as { const?: unknown; type?: unknown; anyOf?: unknown[]; enum?: unknown[] }
  if ('const' in s) return [s.const]
  if (s.type === 'null') return [null]
  if (Array.isArray(s.enum)) return s.enum
  if (!Array.isArray(s.anyOf)) return undefined
  const values: unknown[] = []
  for (const member of s.anyOf) {
    const more = allowedValues(member)
    if (!more) return undefined
    values.push(...more)
  }
  return values
}

/** TypeBox's message, except where it says less than a person needs: a bad enum lists its values by name. */
function issueMessage(e: { schema?: unknown; message: string; summary?: string }): string {
  const values = allowedValues(e.schema)
  if (values && values.length > 1) return `must be one of: ${values.map((v) => JSON.stringify(v)).join(', ')}`
  return e.message
}

function toIssues(error: ValidationError, request: Request): ValidationIssue[] {
  try {
    // A query parameter Elysia coerces (an integer, a boolean) is checked on its own, without its name:
    // find which parameter holds the refused value, so the message can name it.
    const queryName = error.type === 'property' ? queryParamFor(request, error.value) : undefined
    const list = error.type === 'property' && error.valueError ? [error.valueError] : error.all
    return list.map((e) => ({
      path: queryName ?? pointerToPath('path' in e ? String(e.path) : ''),
      message: issueMessage(e as { schema?: unknown; message: string }),
    }))
  } catch {
    return [{ path: '', message: error.message }]
  }
}

function queryParamFor(request: Request, value: unknown): string | undefined {
  for (const [name, raw] of new URL(request.url).searchParams) if (raw === String(value)) return name
  return undefined
}

interface RouteEntry {
  method: string
  path: string
  pattern: RegExp
  isStatic: boolean
}

const trimSlash = (path: string) => (path.length > 1 ? path.replace(/\/+$/, '') : path)
const withHead = (methods: string[]) => [...new Set(methods.includes('GET') ? [...methods, 'HEAD'] : methods)].sort()

/**
 * Which methods a path allows, to tell a wrong method (405 with Allow) from an unknown path (404). A fixed
 * path (/v1/links/bulk, /v1/webhooks/info) answers only its own methods: it never falls into the {id} route
 * beside it. Built at the first request, when every route is registered.
 */
function routeTable(app: Elysia) {
  let entries: RouteEntry[] | undefined
  let fixed: Map<string, string[]> | undefined
  const table = () => {
    if (!entries) {
      entries = app.routes
        .filter((r) => r.method !== 'ALL')
        .map((r) => {
          const path = trimSlash(r.path)
          const source = path
            .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
            .replace(/:[^/]+/g, '[^/]+')
            .replace(/\*/g, '.*')
          return { method: r.method, path, pattern: new RegExp(`^${source}/?$`), isStatic: !/[:*]/.test(path) }
        })
      fixed = new Map()
      for (const r of entries) if (r.isStatic) fixed.set(r.path, withHead([...(fixed.get(r.path) ?? []), r.method]))
    }
    return { entries, fixed: fixed! }
  }
  return {
    /** The methods of a fixed path, or undefined when the path is not one. */
    fixedPath: (pathname: string): string[] | undefined => table().fixed.get(trimSlash(pathname)),
    allowed(pathname: string): string[] {
      const matches = table().entries.filter((r) => r.pattern.test(pathname))
      const fixedOnes = matches.filter((r) => r.isStatic)
      return withHead((fixedOnes.length ? fixedOnes : matches).map((r) => r.method))
    },
  }
}

const methodNotAllowed = (method: string, pathname: string, allow: string[]) =>
  new AppError('method_not_allowed', `${method} is not allowed on ${pathname}; use ${allow.join(', ')}`, { allow }, { allow: allow.join(', ') })

export function createApp(rt: Runtime) {
  // normalize: false makes unknown body fields an error instead of silently dropping them (a typo in a
  // field name must not pass unnoticed).
  const app = new Elysia({ name: 'lnk', seed: rt.instanceId, normalize: false })
  const routes = routeTable(app)

  app
    .onRequest(({ request, set }) => {
      const state = beginRequest(request)
      set.headers['x-request-id'] = state.id
      // Short links first: the server answers them before Elysia (server.ts); this covers app.handle().
      const redirect = rt.modules.redirect.handle(request)
      if (redirect) return withRequestId(redirect, state.id)
      const url = request.url
      const pathStart = url.indexOf('/', url.indexOf('//') + 2)
      const path = pathStart === -1 ? '/' : url.slice(pathStart)
      if (path === '/v1' || path.startsWith('/v1/') || path.startsWith('/v1?')) {
        // Current first, so even the refusal of an unknown version says which one is current.
        set.headers['service-version'] = CURRENT_VERSION
        set.headers['service-version'] = resolveVersion(request.headers.get('service-version'))
      }
      const length = request.headers.get('content-length')
      if (length !== null && Number(length) > rt.config.maxBodyBytes) throw tooLarge(rt.config.maxBodyBytes)
    })
    .onParse(async ({ request, contentType }) => {
      // The conversion beacon reads its own non-JSON bodies (text/plain from sendBeacon), against its own limit.
      if (!JSON_TYPE.test(contentType) && isOwnParserPath(request.url)) return
      // Read here, capped, whatever the type: a chunked body has no Content-Length to check up front.
      const text = new TextDecoder().decode(await readBodyCapped(request, rt.config.maxBodyBytes))
      if (JSON_TYPE.test(contentType)) return parseJsonBody(text) ?? {}
      if (text.trim() === '') return {}
      throw new AppError(
        'invalid_request',
        `This API reads JSON bodies: send Content-Type: application/json${contentType ? `, not ${contentType.slice(0, 100)}` : ''}`,
      )
    })
    .onTransform(({ request }) => {
      refuseNulInUrl(request.url)
      // Routed to a templated route (/links/:id) while the path is a fixed one (/links/bulk): 405, not a lookup.
      const pathname = new URL(request.url).pathname
      const fixed = routes.fixedPath(pathname)
      if (fixed && !fixed.includes(request.method)) throw methodNotAllowed(request.method, pathname, fixed)
    })
    .onError(async ({ code, error: thrown, request, set }) => {
      await releaseIdempotent(request)
      // Elysia wraps whatever a parser throws in a ParseError; ours are AppErrors with their own code.
      const error = code === 'PARSE' && (thrown as Error).cause instanceof AppError ? ((thrown as Error).cause as AppError) : thrown
      let status: number
      let body: ReturnType<typeof errorBody>
      const headers: Record<string, string> = { 'content-type': 'application/json' }
      if (error instanceof AppError) {
        status = statusOf(error.code)
        body = errorBody(error.code, error.message, error.details)
        Object.assign(headers, error.headers)
      } else if (code === 'VALIDATION' || error instanceof ValidationError) {
        const v = error as ValidationError
        const issues = toIssues(v, request)
        status = 400
        const where = v.type === 'property' ? 'query' : v.type
        body = errorBody('validation_failed', `Invalid ${where}: ${issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ')}`, {
          location: where,
          issues,
        })
      } else if (code === 'NOT_FOUND') {
        const pathname = new URL(request.url).pathname
        const allow = routes.allowed(pathname)
        const refusal =
          allow.length && !allow.includes(request.method)
            ? methodNotAllowed(request.method, pathname, allow)
            : new AppError('not_found', `No route for ${request.method} ${pathname}`)
        status = statusOf(refusal.code)
        body = errorBody(refusal.code, refusal.message, refusal.details)
        Object.assign(headers, refusal.headers)
      } else if (code === 'PARSE') {
        status = 400
        body = errorBody('invalid_request', 'The request body could not be parsed; send JSON with Content-Type: application/json')
      } else {
        status = 500
        const id = requestState(request)?.id
        rt.log.error('unhandled error', { request_id: id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) })
        body = errorBody('internal_error', `Something went wrong on our side; quote request id ${id} when reporting it`)
      }
      const state = requestState(request)
      if (state) state.status = status
      for (const [k, v] of Object.entries(set.headers)) if (typeof v === 'string' && !(k in headers)) headers[k] = v
      return new Response(JSON.stringify(body), { status, headers })
    })
    .onAfterResponse(({ request, set, route }) => {
      const state = requestState(request)
      if (!state) return
      const status = state.status ?? (typeof set.status === 'number' ? set.status : 200)
      const ms = performance.now() - state.start
      const path = new URL(request.url).pathname
      rt.metrics.observe(request.method, route || 'unmatched', status, ms / 1000)
      rt.log.info('request', { method: request.method, path, status, ms: Math.round(ms * 10) / 10, request_id: state.id })
    })

  // What the modules contribute: their routes under /v1, or at the root (health, metrics, the document).
  const modules = Object.values(rt.modules) as Module[]
  for (const m of modules) if (m.routes && m.root) app.use(m.routes)
  for (const m of modules) if (m.rootRoutes) app.use(m.rootRoutes)
  app.group('/v1', (v1) => {
    for (const m of modules) if (m.routes && !m.root) v1.use(m.routes)
    return v1
  })

  return app
}

export type App = ReturnType<typeof createApp>
