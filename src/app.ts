// createApp(rt): the Elysia root used by the server and by the tests. It owns what every request shares:
// request id, body limits and JSON parsing, Service-Version, the error envelope, request logs and metrics.
// Feature areas are plugged in as modules.
import { Elysia, ValidationError } from 'elysia'
import { AppError, pointerToPath, type ValidationIssue } from './http/errors'
import { errorBody } from './http/envelope'
import { beginRequest, requestState } from './http/request-context'
import { CURRENT_VERSION, resolveVersion } from './http/version'
import { apiKeyRoutes } from './modules/api-keys/routes'
import { analyticsRoutes } from './modules/analytics/routes'
import { conversionRoutes } from './modules/conversions/routes'
import { linkRoutes } from './modules/links/routes'
import { identityRoutes } from './modules/identity/routes'
import { openapiDocs } from './modules/platform/openapi'
import { opsRoutes } from './modules/platform/ops-routes'
import { qrRoutes } from './modules/qr/routes'
import { webhookRoutes } from './modules/webhooks/routes'
import type { Runtime } from './runtime'

async function withRequestId(response: Response | Promise<Response>, id: string) {
  const res = await response
  res.headers.set('x-request-id', id)
  return res
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i

function toIssues(error: ValidationError): ValidationIssue[] {
  try {
    return error.all.map((e) => ({
      path: pointerToPath('path' in e ? String(e.path) : ''),
      message: ('summary' in e && e.summary) || e.message,
    }))
  } catch {
    return [{ path: '', message: error.message }]
  }
}

/** Routes by method, to tell a wrong method (405 with Allow) from an unknown path (404). */
function allowedMethods(app: Elysia, pathname: string): string[] {
  const methods = new Set<string>()
  for (const route of app.routes) {
    const pattern = new RegExp(`^${route.path.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+').replace(/\*/g, '.*')}/?$`)
    if (pattern.test(pathname) && route.method !== 'ALL') methods.add(route.method)
  }
  if (methods.has('GET')) methods.add('HEAD')
  return [...methods].sort()
}

export function createApp(rt: Runtime) {
  // normalize: false makes unknown body fields an error instead of silently dropping them (a typo in a
  // field name must not pass unnoticed).
  const app = new Elysia({ name: 'lnk', seed: rt.instanceId, normalize: false })

  app
    .onRequest(({ request, set }) => {
      const state = beginRequest(request)
      set.headers['x-request-id'] = state.id
      // Short links first: the server answers them before Elysia (server.ts); this covers app.handle().
      const redirect = rt.redirect(request)
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
      if (length !== null && Number(length) > rt.config.maxBodyBytes) {
        throw new AppError('payload_too_large', `Request body is larger than ${rt.config.maxBodyBytes} bytes`, { limit: rt.config.maxBodyBytes })
      }
    })
    .onParse(async ({ request, contentType }) => {
      if (!JSON_TYPE.test(contentType)) return
      // Read it ourselves: a chunked body has no Content-Length to check up front.
      const bytes = new Uint8Array(await request.arrayBuffer())
      if (bytes.byteLength > rt.config.maxBodyBytes) {
        throw new AppError('payload_too_large', `Request body is larger than ${rt.config.maxBodyBytes} bytes`, { limit: rt.config.maxBodyBytes })
      }
      const text = new TextDecoder().decode(bytes)
      if (text.trim() === '') return {}
      try {
        return JSON.parse(text)
      } catch (err) {
        throw new AppError('invalid_request', `Malformed JSON body: ${(err as Error).message}`)
      }
    })
    .onError(({ code, error: thrown, request, set }) => {
      // Elysia wraps whatever a parser throws in a ParseError; ours are AppErrors with their own code.
      const error = code === 'PARSE' && (thrown as Error).cause instanceof AppError ? ((thrown as Error).cause as AppError) : thrown
      let status: number
      let body: ReturnType<typeof errorBody>
      const headers: Record<string, string> = { 'content-type': 'application/json' }
      if (error instanceof AppError) {
        status = error.status
        body = errorBody(error.code, error.message, error.details)
        Object.assign(headers, error.headers)
      } else if (code === 'VALIDATION' || error instanceof ValidationError) {
        const v = error as ValidationError
        const issues = toIssues(v)
        status = 400
        const where = v.type === 'body' ? 'body' : v.type
        body = errorBody('validation_failed', `Invalid ${where}: ${issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ')}`, { location: where, issues })
      } else if (code === 'NOT_FOUND') {
        const pathname = new URL(request.url).pathname
        const allow = allowedMethods(app, pathname)
        if (allow.length && !allow.includes(request.method)) {
          status = 405
          headers.allow = allow.join(', ')
          body = errorBody('method_not_allowed', `${request.method} is not allowed on ${pathname}; use ${allow.join(', ')}`, { allow })
        } else {
          status = 404
          body = errorBody('not_found', `No route for ${request.method} ${pathname}`)
        }
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
    .use(openapiDocs())
    .use(opsRoutes(rt))
    .group('/v1', (v1) => v1.use(identityRoutes(rt)).use(apiKeyRoutes(rt)).use(linkRoutes(rt)).use(qrRoutes(rt)).use(conversionRoutes(rt)).use(analyticsRoutes(rt)).use(webhookRoutes(rt)))

  return app
}

export type App = ReturnType<typeof createApp>
