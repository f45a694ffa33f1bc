// Rendered QR outputs, memoised: a bounded LRU (entries and bytes) keyed by every parameter that changes the
// bytes. Concurrent requests for the same output share one render. The ETag is a hash of the key and the bytes,
// and rendering is deterministic, so it is stable across restarts and across nodes.
import { createHash } from 'node:crypto'
import { LruCache } from '../../platform/lru'
import { CONTENT_TYPES, qrMatrix, renderPdf, renderPng, renderSvg, type Ecc, type QrFormat, type QrStyle } from './render'

export interface QrRequest extends QrStyle {
  format: QrFormat
  /** The text to encode, exactly. */
  data: string
  ecc: Ecc
}

export interface Rendered {
  body: Uint8Array
  contentType: string
  /** Quoted strong validator. */
  etag: string
}

const QR_CACHE_LIMITS = { entries: 500, bytes: 64 * 1024 * 1024 }

/** The process-wide cache of rendered outputs (renders are pure, so runtimes in one process may share it). */
export const renderedCache = new LruCache<Rendered>(QR_CACHE_LIMITS.entries, QR_CACHE_LIMITS.bytes, (r) => r.body.byteLength + 256)
const inFlight = new Map<string, Promise<Rendered>>()

function cacheKey(r: QrRequest): string {
  return JSON.stringify([r.format, r.size, r.margin, r.ecc, r.fg, r.bg, r.data])
}

/** Renders without the cache: the matrix, then the format's renderer. */
export async function renderUncached(r: QrRequest): Promise<Rendered> {
  const matrix = qrMatrix(r.data, r.ecc)
  const body = r.format === 'png' ? renderPng(matrix, r) : r.format === 'svg' ? new TextEncoder().encode(renderSvg(matrix, r)) : await renderPdf(matrix, r)
  const key = cacheKey(r)
  const etag = `"${createHash('sha256').update(key).update('\0').update(body).digest('base64url').slice(0, 27)}"`
  return { body, contentType: CONTENT_TYPES[r.format], etag }
}

/** The cached rendering of `r`; the first request renders, later ones (and concurrent ones) share it. */
export async function renderQr(r: QrRequest): Promise<Rendered> {
  const key = cacheKey(r)
  const cached = renderedCache.get(key)
  if (cached) return cached
  const pending = inFlight.get(key)
  if (pending) return pending
  const promise = renderUncached(r)
    .then((rendered) => {
      renderedCache.set(key, rendered)
      return rendered
    })
    .finally(() => inFlight.delete(key))
  inFlight.set(key, promise)
  return promise
}

/**
 * If-None-Match against our ETag (weak comparison, as RFC 9110 asks for this header): true when the client's
 * copy is current and a 304 will do.
 */
export function notModified(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false
  const strip = (tag: string) => tag.trim().replace(/^W\//, '')
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || strip(tag) === etag)
}
