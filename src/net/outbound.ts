// The one outbound HTTP sender: every webhook delivery, test ping and forwarded event leaves through here.
//
// Pinning. The host is resolved once (checkUrl) and the request is dialled to the checked address itself:
// the URL handed to fetch carries the IP literal, so there is no second lookup a rebinding DNS server could
// answer differently. The receiver still sees its own name: the Host header is the original host, and for
// https Bun's fetch takes `tls.serverName`, which it uses both as the SNI it sends and as the name the
// certificate is verified against (checked with Bun 1.4.5: a certificate without an IP SAN verifies through
// an IP-literal URL only when serverName names it, and the ClientHello carries the name). When the URL's host
// is itself an IP literal there is no name, so no SNI is sent and the certificate must cover the IP.
// Bun's fetch honours HTTP(S)_PROXY; a proxy then dials on our behalf, but it dials the IP literal we
// checked, so the pinning holds there too.
//
// mTLS: `tls.cert`/`tls.key` present the client certificate. `ca` is added to the system roots rather
// than replacing them, so an operator's private CA does not cut off public receivers.
//
// Redirects are never followed (`redirect: 'manual'`): a 3xx is a failure whose text names the target, so a
// receiver cannot bounce a signed body to an internal address. One AbortController covers resolution,
// connect, headers and body, so `timeoutMs` bounds the whole attempt. Only the first 16 KiB of the answer
// is read; the rest is cancelled.
import { rootCertificates } from 'node:tls'
import { isIP } from 'node:net'
import { checkUrl, urlHost, type EgressPolicy, type Resolver } from './egress'

export const MAX_RESPONSE_BODY = 16 * 1024

export interface OutboundRequest {
  url: string
  /** POST (the default) or GET, which sends no body. */
  method?: 'POST' | 'GET'
  headers: Record<string, string>
  body?: string
  timeoutMs: number
  policy: EgressPolicy
  clientCert?: { cert: string; key: string } | null
  ca?: string | null
  resolver?: (host: string) => Promise<string[]>
}

export interface OutboundResult {
  /** A 2xx answer. */
  ok: boolean
  status: number | null
  headers: Record<string, string>
  /** The answer's body, at most 16 KiB of it. */
  body: string
  bodyTruncated: boolean
  durationMs: number
  /** Why it failed, as a sentence; null on success. */
  error: string | null
  /** The IP actually dialled; null when nothing was dialled. */
  address: string | null
}

class Timeout extends Error {}

/** Rejects with Timeout when the signal fires first: a hanging resolver must not outlive timeoutMs. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) return reject(new Timeout())
    const onAbort = () => reject(new Timeout())
    signal.addEventListener('abort', onAbort, { once: true })
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

/** The URL with its host replaced by the checked address (IPv6 in brackets), port and path kept. */
function pinnedUrl(url: URL, address: string): string {
  const pinned = new URL(url.href)
  pinned.hostname = isIP(address) === 6 ? `[${address}]` : address
  return pinned.href
}

async function readCapped(response: Response): Promise<{ text: string; truncated: boolean }> {
  if (!response.body) return { text: '', truncated: false }
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  let truncated = false
  // Bounded: each pass consumes a chunk, and the loop stops at the cap or the end of the stream.
  while (size <= MAX_RESPONSE_BODY) {
    const { done, value } = await reader.read()
    if (done) break
    chunks.push(value)
    size += value.byteLength
  }
  if (size > MAX_RESPONSE_BODY) {
    truncated = true
    await reader.cancel().catch(() => {})
  }
  const all = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    all.set(chunk, at)
    at += chunk.byteLength
  }
  return { text: new TextDecoder().decode(all.subarray(0, MAX_RESPONSE_BODY)), truncated }
}

const KNOWN_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the receiver',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EPROTO: 'TLS handshake failed (does the receiver require a client certificate, or not speak TLS?)',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS certificate does not name {host}',
  CERT_HAS_EXPIRED: 'TLS certificate has expired',
  SELF_SIGNED_CERT_IN_CHAIN: 'TLS certificate is not trusted (self-signed certificate in the chain)',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS certificate is not trusted (self-signed)',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'TLS certificate is not trusted (unknown issuer)',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate is not trusted (unknown issuer)',
}

/** One sentence for a network failure, with the code kept for searching; Bun's debugging hints dropped. */
function describeError(err: unknown, host: string): string {
  if (!(err instanceof Error)) return String(err)
  const code = (err as { code?: unknown }).code
  if (typeof code === 'string' && KNOWN_ERRORS[code]) return `${KNOWN_ERRORS[code].replace('{host}', host)} (${code})`
  const message = err.message.replace(/\s*For more information, pass `verbose: true`.*$/s, '')
  return typeof code === 'string' && !message.startsWith(code) ? `${code}: ${message}` : message
}

export async function sendOutbound(req: OutboundRequest): Promise<OutboundResult> {
  const started = performance.now()
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), req.timeoutMs)
  const result = (fields: Partial<OutboundResult>): OutboundResult => ({
    ok: false,
    status: null,
    headers: {},
    body: '',
    bodyTruncated: false,
    error: null,
    address: null,
    ...fields,
    durationMs: Math.round(performance.now() - started),
  })
  let address: string | null = null
  let host = ''
  let status: number | null = null
  let responseHeaders: Record<string, string> = {}
  try {
    const check = await untilAborted(checkUrl(req.url, req.policy, req.resolver as Resolver | undefined), controller.signal)
    if (!check.ok) return result({ error: `refused: ${check.reason}` })
    address = check.addresses[0]!
    host = urlHost(check.url)
    const headers = new Headers(req.headers)
    headers.set('host', check.url.host)
    const https = check.url.protocol === 'https:'
    const response = await fetch(pinnedUrl(check.url, address), {
      method: req.method ?? 'POST',
      headers,
      body: req.method === 'GET' ? undefined : req.body,
      redirect: 'manual',
      signal: controller.signal,
      // Pooled connections are keyed by the dialled address: an https one opened for another hostname or
      // client certificate on the same address must never carry this request. Plain http may reuse.
      keepalive: !https,
      tls: https
        ? {
            ...(isIP(host) ? {} : { serverName: host }),
            ...(req.ca ? { ca: [...rootCertificates, req.ca] } : {}),
            ...(req.clientCert ? { cert: req.clientCert.cert, key: req.clientCert.key } : {}),
          }
        : undefined,
    })
    status = response.status
    responseHeaders = Object.fromEntries(response.headers)
    const { text, truncated } = await readCapped(response)
    const base = { status, headers: responseHeaders, body: text, bodyTruncated: truncated, address }
    if (status >= 200 && status < 300) return result({ ...base, ok: true })
    if (status >= 300 && status < 400) {
      const location = response.headers.get('location')
      return result({ ...base, error: `redirect not followed (${status}${location ? ` to ${location}` : ''})` })
    }
    return result({ ...base, error: `answered ${status}` })
  } catch (err) {
    const timedOut = controller.signal.aborted
    const error = timedOut ? `timeout after ${req.timeoutMs} ms` : describeError(err, host)
    return result({ status, headers: responseHeaders, error, address })
  } finally {
    clearTimeout(timer)
  }
}
