// The browser bundle of Scalar's API reference (npm @scalar/api-reference, MIT licence), served by lnk itself at
// /v1/docs/scalar.js so the docs page needs no CDN and works on a machine without internet access.
//
// Embedding: `with { type: 'file' }` makes `bun build --compile` copy the file into the executable (the import
// then yields a /$bunfs/… path that Bun.file reads); under `bun run` and `bun test` it is the file's path in
// node_modules. The package's "exports" map lists no dist/browser/* entry, so a bare specifier does not resolve
// and the file is imported by its path; TypeScript has no declaration for a plain .js file taken as an asset.
// @ts-expect-error TS7016: a .js file imported as a file asset has no type declaration (it is a path string)
import bundlePath from '../../../../node_modules/@scalar/api-reference/dist/browser/standalone.js' with { type: 'file' }
import { promisify } from 'node:util'
import { gzip } from 'node:zlib'

const gzipAsync = promisify(gzip)

export interface ScriptAsset {
  body: Uint8Array
  gzipped: Uint8Array
  /** Content hash: names the identity representation in ETag and versions the script URL. */
  hash: string
}

let loading: Promise<ScriptAsset> | undefined

/** Read, hashed and gzipped once, on first use (gzip runs off the main thread). */
export function scalarBundle(): Promise<ScriptAsset> {
  loading ??= load().catch((err) => {
    loading = undefined
    throw err
  })
  return loading
}

async function load(): Promise<ScriptAsset> {
  const text = await Bun.file(bundlePath as string).text()
  // The source map (17 MB) is not embedded; drop the comment so browsers' devtools do not ask for it.
  const body = new TextEncoder().encode(text.replace(/\n\/\/# sourceMappingURL=[^\n]*\s*$/, '\n'))
  const hash = new Bun.CryptoHasher('sha256').update(body).digest('base64url').slice(0, 20)
  return { body, gzipped: new Uint8Array(await gzipAsync(body, { level: 6 })), hash }
}

const BASE_HEADERS = {
  'content-type': 'text/javascript; charset=utf-8',
  'cache-control': 'public, max-age=86400',
  vary: 'accept-encoding',
  'x-content-type-options': 'nosniff',
}

/** True when Accept-Encoding admits gzip (a `q=0` refuses it). */
function acceptsGzip(header: string | null): boolean {
  if (!header) return false
  for (const part of header.split(',')) {
    const [coding, ...params] = part.trim().toLowerCase().split(';')
    if (coding !== 'gzip' && coding !== 'x-gzip' && coding !== '*') continue
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
    if (q === undefined || Number(q.slice(2)) > 0) return true
  }
  return false
}

function matchesEtag(header: string | null, etags: string[]): boolean {
  if (!header) return false
  if (header.trim() === '*') return true
  return header.split(',').some((tag) => etags.includes(tag.trim().replace(/^W\//, '')))
}

/** GET /v1/docs/scalar.js: the bundle, gzipped when the client accepts it, with a day of caching and an ETag. */
export async function serveScalarBundle(request: Request): Promise<Response> {
  const asset = await scalarBundle()
  const identityTag = `"${asset.hash}"`
  const gzipTag = `"${asset.hash}-gzip"`
  const gzipped = acceptsGzip(request.headers.get('accept-encoding'))
  const etag = gzipped ? gzipTag : identityTag
  if (matchesEtag(request.headers.get('if-none-match'), [identityTag, gzipTag])) {
    return new Response(null, { status: 304, headers: { ...BASE_HEADERS, etag } })
  }
  return gzipped
    ? new Response(asset.gzipped, { headers: { ...BASE_HEADERS, etag, 'content-encoding': 'gzip' } })
    : new Response(asset.body, { headers: { ...BASE_HEADERS, etag } })
}
