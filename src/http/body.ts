// Request bodies as the API reads them: at most LNK_MAX_BODY_BYTES (counted while reading, so a chunked body
// without Content-Length is cut off too), JSON only, an object at the top, and not nested deeper than any
// body lnk takes could be. Deep nesting is refused here because schema validation recurses and would
// otherwise overflow the stack on a hostile body (a 500 instead of a 400). The NUL character is refused in
// bodies, queries and paths alike: no field of the API can hold it, and PostgreSQL's text cannot store it.
import { AppError, invalid } from '../platform/errors'

/** Deeper than any body of the API (the deepest, a webhook template, nests a handful of levels). */
export const MAX_JSON_DEPTH = 32

export const tooLarge = (limit: number) =>
  new AppError('payload_too_large', `Request body is larger than ${limit} bytes; send at most ${limit} bytes`, { limit })

/**
 * Reads the whole body, refusing it (413, or `refuse`'s error) the moment it passes `limit` bytes, without
 * reading the rest.
 */
export async function readBodyCapped(request: Request, limit: number, refuse: (limit: number) => Error = tooLarge): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0)
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      throw refuse(limit)
    }
    chunks.push(value)
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
}

/** How deep a parsed JSON value nests (a scalar is 0), stopping as soon as it passes `max`. */
function depthExceeds(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]]
  while (stack.length) {
    const [v, depth] = stack.pop()!
    if (typeof v !== 'object' || v === null) continue
    if (depth + 1 > max) return true
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1])
  }
  return false
}

/** JSON text as a request body: malformed is invalid_request; not an object, or nested too deep, is validation_failed. */
export function parseJsonBody(text: string): Record<string, unknown> | undefined {
  if (text.trim() === '') return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    throw new AppError('invalid_request', `Malformed JSON body: ${(err as Error).message}`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const found = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`
    throw bodyInvalid(`The body must be a JSON object, not ${found}`)
  }
  if (depthExceeds(value, MAX_JSON_DEPTH)) {
    throw bodyInvalid(`The body nests deeper than ${MAX_JSON_DEPTH} levels; no field of this API needs that`)
  }
  // A NUL can only come in escaped; most bodies are passed over by this one search.
  const nul = text.includes('\\u0000') ? nulPath(value, '') : null
  if (nul !== null) throw invalid('body', [{ path: nul, message: NUL_MESSAGE }])
  return value as Record<string, unknown>
}

const NUL_MESSAGE = 'must not contain the NUL character (U+0000)'

/** The dot path of the first key or string holding a NUL, or null. */
function nulPath(value: unknown, path: string): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null
  if (typeof value !== 'object' || value === null) return null
  for (const [key, child] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key
    if (key.includes('\u0000')) return at
    const found = nulPath(child, at)
    if (found !== null) return found
  }
  return null
}

/** A request whose path or query holds an encoded NUL: refused before routing reads either. */
export function refuseNulInUrl(url: string): void {
  if (!/%00/.test(url)) return
  const { pathname, searchParams } = new URL(url)
  if (pathname.includes('%00')) throw invalid('params', [{ path: '', message: NUL_MESSAGE }])
  for (const [name, value] of searchParams) {
    if (name.includes('\u0000') || value.includes('\u0000')) throw invalid('query', [{ path: name.replaceAll('\u0000', ''), message: NUL_MESSAGE }])
  }
}

const bodyInvalid = (message: string) => invalid('body', [{ path: '', message }])
