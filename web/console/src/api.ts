// The console's only way to the server: the documented /v1 API on this origin, with the signed-in key.
// Errors come back as ApiError carrying the envelope's stable code, so screens can say what went wrong.

import type { Body, Concrete, Data, Meta, PathFor, QueryOf, Schema } from './api-types'
import { withQuery, type Query } from './query'

const KEY_STORAGE = 'lnk.console.key'

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message)
  }
}

/** One page of a list: the items and the list's `meta.pagination`. */
export interface Page<P extends PathFor<'get'>> {
  data: Data<P, 'get'>
  pagination?: Meta<P, 'get'> extends { pagination?: infer N } ? N : never
  /** The whole `meta` (cursor lists: `nextCursor`). */
  meta?: Meta<P, 'get'>
}

export const storedKey = (): string | null => sessionStorage.getItem(KEY_STORAGE)
export const storeKey = (key: string | null) => (key ? sessionStorage.setItem(KEY_STORAGE, key) : sessionStorage.removeItem(KEY_STORAGE))

/** Called when the server refuses the key itself (401), so the shell can sign out. */
let onUnauthorized: () => void = () => {}
export const setUnauthorizedHandler = (fn: () => void) => void (onUnauthorized = fn)

async function send(method: string, path: string, body?: unknown, key = storedKey(), headers: Record<string, string> = {}): Promise<Response> {
  let response: Response
  try {
    response = await fetch(`/v1${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    })
  } catch {
    throw new ApiError(0, 'network_error', 'The server could not be reached. Check that lnk is running and try again.')
  }
  if (response.ok) return response
  // The API's error envelope, when the body is one.
  let envelope: Partial<Schema<'Error'>> = {}
  try {
    envelope = await response.json()
  } catch {
    // Not the API's envelope (a proxy's page): fall through to the generic message.
  }
  const code = envelope.error?.code ?? `http_${response.status}`
  const message = envelope.error?.message ?? `The server answered ${response.status} ${response.statusText}.`
  if (response.status === 401 && key === storedKey()) onUnauthorized()
  throw new ApiError(response.status, code, message, envelope.error?.details)
}

async function json<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await send(method, path, body)
  if (response.status === 204) return undefined as T
  const payload = (await response.json()) as { data: T }
  return payload.data
}

// Every call names the documented path it is for (`api.get<'/links/{id}'>(`/links/${id}`)`): the argument
// must fit that path, the query and body are checked against its operation, and the answer has its type.
// The type argument is never inferred from the argument (NoInfer) and defaults to `never`, so a call without
// it does not compile.
export const api = {
  get: <P extends PathFor<'get'> = never>(path: NoInfer<Concrete<P>>, query?: QueryOf<P, 'get'>) =>
    json<Data<P, 'get'>>('GET', withQuery(path, query as Query)),
  post: <P extends PathFor<'post'> = never>(path: NoInfer<Concrete<P>>, body?: Body<P, 'post'>) => json<Data<P, 'post'>>('POST', path, body ?? {}),
  patch: <P extends PathFor<'patch'> = never>(path: NoInfer<Concrete<P>>, body: Body<P, 'patch'>) => json<Data<P, 'patch'>>('PATCH', path, body),
  del: <P extends PathFor<'delete'> = never>(path: NoInfer<Concrete<P>>) => json<Data<P, 'delete'>>('DELETE', path),
  /** A list with its pagination (`meta.pagination`). */
  async page<P extends PathFor<'get'> = never>(path: NoInfer<Concrete<P>>, query?: QueryOf<P, 'get'>): Promise<Page<P>> {
    const response = await send('GET', withQuery(path, query as Query))
    const payload = (await response.json()) as { data: Page<P>['data']; meta?: Meta<P, 'get'> & { pagination?: Page<P>['pagination'] } }
    return { data: payload.data, pagination: payload.meta?.pagination, meta: payload.meta }
  },
  /** A binary answer (QR images), as a Blob. */
  async blob<P extends PathFor<'get'> = never>(path: NoInfer<Concrete<P>>, query?: QueryOf<P, 'get'>): Promise<Blob> {
    return (await send('GET', withQuery(path, query as Query))).blob()
  },
  /** Checks a key before it is kept: GET /v1/me with that key. */
  async me(key: string): Promise<Me> {
    const response = await send('GET', '/me', undefined, key)
    return ((await response.json()) as { data: Me }).data
  },
}

/** Who the signed-in key is: GET /v1/me. */
export type Me = Data<'/me', 'get'>

/** What a 403 means, in words a person can act on; other errors keep the server's own message. */
export function explain(error: unknown): string {
  if (!(error instanceof ApiError)) return error instanceof Error ? error.message : String(error)
  switch (error.code) {
    case 'forbidden':
      return `This API key is not allowed to do that. ${error.message} Ask a workspace owner for a key with that permission.`
    case 'out_of_scope':
      return `This API key is limited to some domains or tags, and this link is outside them. ${error.message}`
    case 'ip_not_allowed':
      return `This API key only works from certain addresses, and this browser's address is not one of them.`
    case 'outside_schedule':
      return `This API key only works during its schedule, and it is outside it now.`
    case 'key_paused':
      return `This API key is paused. Resume it, or sign in with another key.`
    case 'plan_limit_reached':
      return `The workspace has reached its plan's limit. ${error.message}`
    case 'rate_limited':
      return `Too many requests in a short time. Wait a moment and try again.`
    default:
      return error.message
  }
}
