// QR codes (spec 4.1 rules 3-4, 4.2): the Link's qr object, the public PNG renderer and the png/svg/pdf
// downloads. Every output is decoded with a real decoder (jsQR) to the exact short URL: PNG through pngjs, SVG
// through a small rasteriser that reads the SVG text we produced, PDF through poppler's pdftoppm.
import SwaggerParser from '@apidevtools/swagger-parser'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { inflateSync } from 'node:zlib'
import jsQR from 'jsqr'
import { PDFDocument, PDFName, PDFRawStream, PDFDict } from 'pdf-lib'
import { PNG } from 'pngjs'
import { renderedCache, renderUncached } from '../../src/modules/qr/cache'
import { LruCache } from '../../src/platform/lru'
import { contrastRatio, normaliseColour } from '../../src/modules/qr/render'
import { body, bootstrapAccount, makeKey, setup, type TestEnv } from '../helpers'

const PDFTOPPM = '/usr/bin/pdftoppm'

let env: TestEnv
let key: string
let otherKey: string
let link: { id: string; slug: string; shortUrl: string; qr: { svg: string; png: string } }
let foreignLink: { id: string }

beforeAll(async () => {
  env = await setup({ env: { LNK_SHORT_DOMAINS: 'localhost:8080,go.example' } })
  key = (await bootstrapAccount(env.rt, 'QR owner')).apiKey.key
  otherKey = (await bootstrapAccount(env.rt, 'QR other')).apiKey.key
  const res = await env.request('/v1/links', { method: 'POST', key, json: { destinationUrl: 'https://example.com/landing', slug: 'qr-demo', include: ['qr'] } })
  expect(res.status).toBe(201)
  link = (await body(res)).data
  const other = await env.request('/v1/links', { method: 'POST', key: otherKey, json: { destinationUrl: 'https://example.com/theirs' } })
  foreignLink = (await body(other)).data
})
afterAll(() => env.cleanup())

// ---------------------------------------------------------------------------------------------------------------
// Decoders
// ---------------------------------------------------------------------------------------------------------------

interface Raster {
  width: number
  height: number
  data: Uint8ClampedArray
}

function decode(img: Raster) {
  const found = jsQR(img.data, img.width, img.height)
  if (!found) throw new Error(`jsQR found no code in a ${img.width}x${img.height} image`)
  return found
}

function readPng(bytes: Uint8Array): Raster {
  const png = PNG.sync.read(Buffer.from(bytes))
  return { width: png.width, height: png.height, data: new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length) }
}

function pixel(img: Raster, x: number, y: number): string {
  const i = (y * img.width + x) * 4
  return `#${[0, 1, 2].map((c) => img.data[i + c]!.toString(16).padStart(2, '0')).join('')}`
}

/**
 * Rasterises the SVG we serve, from its text: the viewBox, the background rect and the path of the dark modules
 * (each subpath an axis-aligned rectangle in module units), painted at `scale` px per module inside an extra
 * white quiet zone of `pad` modules. Anything it does not understand fails the test.
 */
function rasteriseSvg(svg: string, scale = 8, pad = 4): Raster & { modules: number; fg: string; bg: string; attrs: Record<string, string> } {
  const root = /^<svg\b([^>]*)>/.exec(svg)
  if (!root) throw new Error('no <svg> root')
  const attrs = Object.fromEntries([...root[1]!.matchAll(/([\w:-]+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]))
  const [minX, minY, w, h] = attrs.viewBox!.split(/\s+/).map(Number) as [number, number, number, number]
  if (minX !== 0 || minY !== 0 || w !== h) throw new Error(`unexpected viewBox ${attrs.viewBox}`)
  const rect = /<rect\b[^>]*\bwidth="([\d.]+)"[^>]*\bheight="([\d.]+)"[^>]*\bfill="(#[0-9a-f]{6})"/i.exec(svg)
  const path = /<path\b[^>]*\bfill="(#[0-9a-f]{6})"[^>]*\bd="([^"]*)"/i.exec(svg)
  if (!rect || !path) throw new Error('expected a background <rect> and a <path> with fill')
  if (Number(rect[1]) !== w || Number(rect[2]) !== h) throw new Error('the background does not cover the viewBox')
  const [bg, fg, d] = [rect[3]!, path[1]!, path[2]!]
  const size = (w + 2 * pad) * scale
  const data = new Uint8ClampedArray(size * size * 4).fill(255)
  const paint = (colour: string, x0: number, y0: number, x1: number, y1: number) => {
    const n = Number.parseInt(colour.slice(1), 16)
    for (let y = Math.round((y0 + pad) * scale); y < Math.round((y1 + pad) * scale); y++) {
      for (let x = Math.round((x0 + pad) * scale); x < Math.round((x1 + pad) * scale); x++) {
        const i = (y * size + x) * 4
        data.set([(n >> 16) & 255, (n >> 8) & 255, n & 255, 255], i)
      }
    }
  }
  paint(bg, 0, 0, w, h)
  // A tiny path interpreter: M/m, H/h, V/v, L/l, Z/z; every closed subpath must be an axis-aligned rectangle.
  const tokens = d.match(/[MmHhVvLlZz]|-?\d+(?:\.\d+)?/g) ?? []
  let i = 0
  let x = 0
  let y = 0
  let points: [number, number][] = []
  const num = () => Number(tokens[i++])
  while (i < tokens.length) {
    const cmd = tokens[i++]!
    if (cmd === 'M' || cmd === 'm') {
      const nx = num()
      const ny = num()
      ;[x, y] = cmd === 'M' ? [nx, ny] : [x + nx, y + ny]
      points = [[x, y]]
    } else if (cmd === 'H' || cmd === 'h') {
      const v = num()
      x = cmd === 'H' ? v : x + v
      points.push([x, y])
    } else if (cmd === 'V' || cmd === 'v') {
      const v = num()
      y = cmd === 'V' ? v : y + v
      points.push([x, y])
    } else if (cmd === 'L' || cmd === 'l') {
      const nx = num()
      const ny = num()
      ;[x, y] = cmd === 'L' ? [nx, ny] : [x + nx, y + ny]
      points.push([x, y])
    } else if (cmd === 'Z' || cmd === 'z') {
      const xs = points.map((p) => p[0])
      const ys = points.map((p) => p[1])
      const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)]
      if (!points.every(([px, py]) => (px === x0 || px === x1) && (py === y0 || py === y1)))
        throw new Error(`subpath is not a rectangle: ${JSON.stringify(points)}`)
      paint(fg, x0, y0, x1, y1)
      ;[x, y] = points[0]!
    } else throw new Error(`unsupported path command ${cmd}`)
  }
  return { width: size, height: size, data, modules: w, fg, bg, attrs }
}

let tmp: string | undefined
function pdfToRaster(pdf: Uint8Array): Raster {
  try {
    readFileSync(PDFTOPPM)
  } catch {
    throw new Error(`${PDFTOPPM} is missing: the PDF tests rasterise with poppler. Install it with 'apt-get install -y poppler-utils'.`)
  }
  tmp ??= mkdtempSync(join(tmpdir(), 'lnk-qr-'))
  const file = join(tmp, `${Math.random().toString(36).slice(2)}.pdf`)
  writeFileSync(file, pdf)
  const out = Bun.spawnSync([PDFTOPPM, '-png', '-r', '150', '-singlefile', file, file.replace(/\.pdf$/, '')])
  if (out.exitCode !== 0) throw new Error(`pdftoppm failed: ${out.stderr.toString()}`)
  return readPng(readFileSync(file.replace(/\.pdf$/, '.png')))
}
afterAll(() => tmp && rmSync(tmp, { recursive: true, force: true }))

/** What a PDF holds: page sizes, image XObjects anywhere, and the drawing operators of its first page. */
async function inspectPdf(bytes: Uint8Array) {
  const doc = await PDFDocument.load(bytes)
  const images = doc.context
    .enumerateIndirectObjects()
    .filter(
      ([, obj]) => (obj instanceof PDFRawStream ? obj.dict : obj instanceof PDFDict ? obj : undefined)?.get(PDFName.of('Subtype'))?.toString() === '/Image',
    )
  const page = doc.getPage(0)
  const contents = page.node.Contents()
  const streams = contents instanceof PDFRawStream ? [contents] : []
  if (!(contents instanceof PDFRawStream) && contents) {
    for (const ref of (contents as any).asArray()) streams.push(doc.context.lookup(ref) as PDFRawStream)
  }
  const ops = streams
    .map((s) => {
      const filter = s.dict.get(PDFName.of('Filter'))?.toString()
      return Buffer.from(filter === '/FlateDecode' ? inflateSync(s.contents) : s.contents).toString('latin1')
    })
    .join('\n')
  const xobjects = page.node.Resources()?.get(PDFName.of('XObject'))
  return { pages: doc.getPageCount(), size: page.getSize(), images: images.length, xobjects, ops, title: doc.getTitle() }
}

const get = (path: string, init: RequestInit & { key?: string } = {}) => env.request(path, init)
const bytesOf = async (res: Response) => new Uint8Array(await res.arrayBuffer())
const renderPath = (data: string, extra = '') => `/v1/qr/render?data=${encodeURIComponent(data)}${extra}`

async function expectInvalid(res: Response, path: string) {
  expect(res.status).toBe(400)
  const json = await body(res)
  expect({ success: json.success, code: json.error.code }).toEqual({ success: false, code: 'validation_failed' })
  expect(json.error.details.issues.map((i: { path: string }) => i.path)).toContain(path)
  return json
}

// ---------------------------------------------------------------------------------------------------------------
// The Link's qr object
// ---------------------------------------------------------------------------------------------------------------

describe('the qr object of a Link (include=qr)', () => {
  test('qr.svg is inline SVG that decodes to the short URL', () => {
    expect(link.qr.svg.startsWith('<svg')).toBe(true)
    const img = rasteriseSvg(link.qr.svg)
    expect(img.attrs.width).toBe('512')
    expect(img.attrs['shape-rendering']).toBe('crispEdges')
    expect(decode(img).data).toBe(link.shortUrl)
  })

  test('qr.png is {base_url}/qr/render?data=<short URL>&size=512, and fetching it yields a PNG of the short URL', async () => {
    expect(link.qr.png).toBe(`http://localhost:8080/v1/qr/render?data=${encodeURIComponent(link.shortUrl)}&size=512`)
    const url = new URL(link.qr.png)
    const res = await get(url.pathname + url.search) // public: no key
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/png')
    const img = readPng(await bytesOf(res))
    expect([img.width, img.height]).toEqual([512, 512])
    expect(decode(img).data).toBe(link.shortUrl)
  })

  test('GET /links?include=qr carries the same qr object', async () => {
    const res = await get('/v1/links?include=qr', { key })
    const found = (await body(res)).data.find((l: { id: string }) => l.id === link.id)
    expect(found.qr).toEqual(link.qr)
  })
})

// ---------------------------------------------------------------------------------------------------------------
// GET /qr/render
// ---------------------------------------------------------------------------------------------------------------

describe('GET /v1/qr/render (public PNG)', () => {
  test('answers PNG with long-lived public caching, an ETag and no envelope', async () => {
    const res = await get(renderPath(link.shortUrl))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/png')
    expect(res.headers.get('cache-control')).toBe('public, max-age=86400, immutable')
    expect(res.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{20,}"$/)
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.headers.get('x-request-id')).toBeTruthy()
    const bytes = await bytesOf(res)
    expect(Number(res.headers.get('content-length'))).toBe(bytes.byteLength)
    expect([...bytes.slice(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
  })

  test('wins over /qr/:linkId: "render" is never taken for a link id', async () => {
    const res = await get(renderPath(link.shortUrl))
    expect(res.status).toBe(200)
  })

  test("renders any URL on this service's short domains, exactly as given (even for no existing link)", async () => {
    for (const data of ['https://go.example/abc', 'http://localhost:8080/some-Slug_1?utm=x', 'HTTP://LOCALHOST:8080/Case']) {
      const res = await get(renderPath(data))
      expect(res.status).toBe(200)
      expect(decode(readPng(await bytesOf(res))).data).toBe(data)
    }
  })

  test('refuses anything that is not a short URL of this service: it is not an open QR generator', async () => {
    const refused = [
      'https://evil.example/x',
      'https://go.example.evil.example/x',
      'http://localhost:8081/x',
      'http://localhost/x',
      'javascript:alert(1)',
      'JavaScript://localhost:8080/%0aalert(1)',
      'data:text/html,hi',
      'ftp://localhost:8080/x',
      'mailto:a@localhost:8080',
      'localhost:8080/x',
      '/x',
      'hello world',
      'https://user:pw@go.example/x',
      `http://localhost:8080/${'a'.repeat(2030)}`,
    ]
    for (const data of refused) {
      const json = await expectInvalid(await get(renderPath(data)), 'data')
      expect(json.error.message).toContain('data')
    }
    await expectInvalid(await get('/v1/qr/render'), 'data')
    await expectInvalid(await get('/v1/qr/render?data='), 'data')
    // Given twice, whichever would count, the request is refused.
    await expectInvalid(await get(`${renderPath('https://evil.example/x')}&data=${encodeURIComponent(link.shortUrl)}`), 'data')
    await expectInvalid(await get(`${renderPath(link.shortUrl)}&size=100&size=200`), 'size')
  })

  test('says why a foreign host is refused', async () => {
    const json = await body(await get(renderPath('https://evil.example/x')))
    expect(json.error.message).toContain('evil.example')
    expect(json.error.message).toContain('short domains')
  })

  test('data up to 2048 characters; too long for the error correction level is a 400 naming data', async () => {
    const long = `http://localhost:8080/${'a'.repeat(2048 - 22)}`
    expect(long.length).toBe(2048)
    const ok = await get(renderPath(long, '&ecc=L&size=1024'))
    expect(ok.status).toBe(200)
    expect(decode(readPng(await bytesOf(ok))).data).toBe(long)
    const json = await expectInvalid(await get(renderPath(long, '&ecc=H')), 'data')
    expect(json.error.message).toContain('too long')
  })

  test('a size too small for every module to get a pixel is a 400 naming size', async () => {
    const dense = `http://localhost:8080/${'b'.repeat(300)}`
    const json = await expectInvalid(await get(renderPath(dense, '&size=64&ecc=H')), 'size')
    expect(json.error.message).toMatch(/size >= \d+/)
  })
})

// ---------------------------------------------------------------------------------------------------------------
// GET /qr/{linkId}
// ---------------------------------------------------------------------------------------------------------------

describe('GET /v1/qr/{linkId}', () => {
  test('png by default: 512 px, download file name, private caching, decodes', async () => {
    const res = await get(`/v1/qr/${link.id}`, { key })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/png')
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="qr-demo-qr.png"')
    expect(res.headers.get('cache-control')).toBe('private, max-age=300')
    expect(res.headers.get('etag')).toBeTruthy()
    const img = readPng(await bytesOf(res))
    expect([img.width, img.height]).toEqual([512, 512])
    expect(decode(img).data).toBe(link.shortUrl)
  })

  test('svg: image/svg+xml, vector, width and height = size, decodes', async () => {
    const res = await get(`/v1/qr/${link.id}?format=svg&size=300`, { key })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/svg+xml')
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="qr-demo-qr.svg"')
    const svg = await res.text()
    expect(svg).not.toContain('<image')
    expect(svg.match(/<path/g)).toHaveLength(1)
    const img = rasteriseSvg(svg)
    expect([img.attrs.width, img.attrs.height]).toEqual(['300', '300'])
    expect(decode(img).data).toBe(link.shortUrl)
  })

  test('pdf: application/pdf, one page exactly the size of the code, vector modules and no image, decodes', async () => {
    const res = await get(`/v1/qr/${link.id}?format=pdf&size=400`, { key })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/pdf')
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="qr-demo-qr.pdf"')
    const bytes = await bytesOf(res)
    expect(Buffer.from(bytes.slice(0, 5)).toString()).toBe('%PDF-')
    const pdf = await inspectPdf(bytes)
    expect(pdf.pages).toBe(1)
    expect(pdf.size).toEqual({ width: 400, height: 400 })
    expect(pdf.images).toBe(0)
    expect(pdf.xobjects === undefined || (pdf.xobjects as PDFDict).keys().length === 0).toBe(true)
    expect(pdf.ops).not.toContain(' Do')
    // The background plus one rectangle per run of dark modules, filled as one path.
    expect((pdf.ops.match(/ re\b/g) ?? []).length).toBeGreaterThan(50)
    expect(pdf.title).toContain(link.shortUrl)
    const img = pdfToRaster(bytes)
    expect([img.width, img.height]).toEqual([Math.ceil((400 / 72) * 150), Math.ceil((400 / 72) * 150)]) // 400 pt at 150 dpi
    expect(decode(img).data).toBe(link.shortUrl)
  })

  test('size sets the pixel size exactly, and every size decodes', async () => {
    for (const size of [64, 100, 257, 333, 1000, 4096]) {
      const res = await get(`/v1/qr/${link.id}?size=${size}`, { key })
      expect(res.status).toBe(200)
      const img = readPng(await bytesOf(res))
      expect({ size, width: img.width, height: img.height }).toEqual({ size, width: size, height: size })
      if (size >= 100) expect(decode(img).data).toBe(link.shortUrl)
    }
    const pdf = await inspectPdf(await bytesOf(await get(`/v1/qr/${link.id}?format=pdf&size=64`, { key })))
    expect(pdf.size).toEqual({ width: 64, height: 64 })
  }, 30_000)

  test('ecc changes the version: H is denser than L, and both decode', async () => {
    const version = async (ecc: string, format = 'png') => {
      const res = await get(`/v1/qr/${link.id}?ecc=${ecc}&format=${format}`, { key })
      expect(res.status).toBe(200)
      if (format === 'svg') return rasteriseSvg(await res.text()).modules
      const found = decode(readPng(await bytesOf(res)))
      expect(found.data).toBe(link.shortUrl)
      return found.version
    }
    const [l, m, q, h] = [await version('L'), await version('M'), await version('Q'), await version('H')]
    expect(l).toBeLessThan(h)
    expect(l).toBeLessThanOrEqual(m)
    expect(m).toBeLessThanOrEqual(q)
    expect(q).toBeLessThanOrEqual(h)
    expect(await version('L', 'svg')).toBeLessThan(await version('H', 'svg'))
  })

  test('margin sets the quiet zone in modules (0-16)', async () => {
    const modules = async (margin: number) => {
      const res = await get(`/v1/qr/${link.id}?format=svg&margin=${margin}`, { key })
      expect(res.status).toBe(200)
      const svg = await res.text()
      const img = rasteriseSvg(svg)
      expect(decode(img).data).toBe(link.shortUrl)
      return img.modules
    }
    const [zero, four, sixteen] = [await modules(0), await modules(4), await modules(16)]
    expect(four - zero).toBe(8)
    expect(sixteen - zero).toBe(32)
    // The PNG keeps at least the quiet zone asked for: the top-left pixels are background.
    const img = readPng(await bytesOf(await get(`/v1/qr/${link.id}?margin=0&size=${zero * 10}`, { key })))
    expect(pixel(img, 0, 0)).toBe('#000000') // finder pattern corner, no quiet zone
    const padded = readPng(await bytesOf(await get(`/v1/qr/${link.id}?margin=2&size=${(zero + 4) * 10}`, { key })))
    expect(pixel(padded, 19, 19)).toBe('#ffffff')
    expect(pixel(padded, 20, 20)).toBe('#000000')
  })

  test('fg and bg apply to every format (#rgb and #rrggbb)', async () => {
    const fg = '#1a237e'
    const bg = '#ffe'
    const q = `fg=${encodeURIComponent(fg)}&bg=${encodeURIComponent(bg)}&margin=4`
    const png = readPng(await bytesOf(await get(`/v1/qr/${link.id}?${q}&size=370`, { key })))
    expect(pixel(png, 0, 0)).toBe('#ffffee')
    // A row through the middle crosses dark and light modules: exactly the two colours, nothing in between.
    const colours = new Set<string>()
    for (let x = 0; x < png.width; x++) colours.add(pixel(png, x, Math.floor(png.height / 2)))
    expect([...colours].sort()).toEqual(['#1a237e', '#ffffee'])
    expect(decode(png).data).toBe(link.shortUrl)

    const svg = await (await get(`/v1/qr/${link.id}?${q}&format=svg`, { key })).text()
    const raster = rasteriseSvg(svg)
    expect([raster.fg, raster.bg]).toEqual(['#1a237e', '#ffffee'])
    expect(decode(raster).data).toBe(link.shortUrl)

    const pdfBytes = await bytesOf(await get(`/v1/qr/${link.id}?${q}&format=pdf`, { key }))
    const pdfImg = pdfToRaster(pdfBytes)
    expect(pixel(pdfImg, 2, 2)).toBe('#ffffee')
    expect(decode(pdfImg).data).toBe(link.shortUrl)
    const ops = (await inspectPdf(pdfBytes)).ops
    expect(ops).toContain('0.102 0.1373 0.4941 rg')
  })

  test('light on dark is accepted when the contrast is enough', async () => {
    const res = await get(`/v1/qr/${link.id}?fg=%23ffffff&bg=%23000000`, { key })
    expect(res.status).toBe(200)
    expect(decode(readPng(await bytesOf(res))).data).toBe(link.shortUrl)
  })

  test('400 for bad values, each naming its parameter', async () => {
    const cases: [string, string][] = [
      ['size=63', 'size'],
      ['size=4097', 'size'],
      ['size=abc', 'size'],
      ['size=1.5', 'size'],
      ['size=-100', 'size'],
      ['margin=17', 'margin'],
      ['margin=-1', 'margin'],
      ['ecc=X', 'ecc'],
      ['ecc=', 'ecc'],
      ['fg=red', 'fg'],
      ['fg=%23ff00', 'fg'],
      ['fg=000000', 'fg'],
      ['bg=%23gggggg', 'bg'],
      ['fg=%23000&bg=%23000000', 'fg'],
      ['fg=%23777777&bg=%23999999', 'fg'],
      ['format=gif', 'format'],
      ['format=PNG', 'format'],
    ]
    for (const [query, path] of cases) {
      const res = await get(`/v1/qr/${link.id}?${query}`, { key })
      await expectInvalid(res, path)
    }
    for (const [query, path] of cases.filter(([q]) => !q.startsWith('format'))) await expectInvalid(await get(renderPath(link.shortUrl, `&${query}`)), path)
  })

  test('the messages say what is wrong: equal colours, low contrast, # in a URL', async () => {
    const same = await body(await get(`/v1/qr/${link.id}?fg=%23fff&bg=%23ffffff`, { key }))
    expect(same.error.message).toContain('must differ from bg')
    const low = await body(await get(`/v1/qr/${link.id}?fg=%23777777&bg=%23999999`, { key }))
    expect(low.error.message).toMatch(/contrast .* too low/)
    const name = await body(await get(`/v1/qr/${link.id}?fg=red`, { key }))
    expect(name.error.message).toContain('%23')
  })

  test('every problem is listed at once', async () => {
    const json = await expectInvalid(await get(`/v1/qr/${link.id}?size=1&ecc=Z&format=bmp`, { key }), 'size')
    expect(json.error.details.issues.map((i: { path: string }) => i.path).sort()).toEqual(['ecc', 'format', 'size'])
  })

  test('401 without a key, before any check of the query', async () => {
    for (const path of [`/v1/qr/${link.id}`, `/v1/qr/${link.id}?size=1&format=gif`]) {
      const res = await get(path)
      expect(res.status).toBe(401)
      expect((await body(res)).error.code).toBe('unauthorized')
    }
  })

  test('403 for a key without links:read', async () => {
    const writer = await makeKey(env.rt, 'qr-owner', 'links:write')
    const res = await get(`/v1/qr/${link.id}`, { key: writer.key })
    expect(res.status).toBe(403)
    expect((await body(res)).error.code).toBe('forbidden')
    const reader = await makeKey(env.rt, 'qr-owner', 'links:read')
    expect((await get(`/v1/qr/${link.id}`, { key: reader.key })).status).toBe(200)
  })

  test('404 for a link of another workspace, and for an unknown id', async () => {
    for (const id of [foreignLink.id, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const res = await get(`/v1/qr/${id}`, { key })
      expect(res.status).toBe(404)
      expect((await body(res)).error.code).toBe('not_found')
    }
    expect((await get(`/v1/qr/${foreignLink.id}`, { key: otherKey })).status).toBe(200)
  })

  test('follows the link: after a slug change the code holds the new short URL', async () => {
    const created = (
      await body(await env.request('/v1/links', { method: 'POST', key, json: { destinationUrl: 'https://example.com/moving', slug: 'before-move' } }))
    ).data
    const before = decode(readPng(await bytesOf(await get(`/v1/qr/${created.id}`, { key })))).data
    expect(before).toBe(created.shortUrl)
    const patched = await env.request(`/v1/links/${created.id}`, { method: 'PATCH', key, json: { slug: 'after-move' } })
    expect(patched.status).toBe(200)
    const res = await get(`/v1/qr/${created.id}`, { key })
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="after-move-qr.png"')
    expect(decode(readPng(await bytesOf(res))).data).toBe('http://localhost:8080/after-move')
  })
})

// ---------------------------------------------------------------------------------------------------------------
// Caching and conditional requests
// ---------------------------------------------------------------------------------------------------------------

describe('ETag, If-None-Match and the render cache', () => {
  test('304 on a matching If-None-Match, for both routes', async () => {
    for (const [path, k] of [
      [renderPath(link.shortUrl), undefined],
      [`/v1/qr/${link.id}?format=svg`, key],
    ] as const) {
      const first = await get(path, { key: k })
      const etag = first.headers.get('etag')!
      expect(etag).toBeTruthy()
      for (const inm of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
        const again = await get(path, { key: k, headers: { 'if-none-match': inm } })
        expect(again.status).toBe(304)
        expect(again.headers.get('etag')).toBe(etag)
        expect(again.headers.get('cache-control')).toBe(first.headers.get('cache-control'))
        expect((await again.arrayBuffer()).byteLength).toBe(0)
      }
      const stale = await get(path, { key: k, headers: { 'if-none-match': '"something-else"' } })
      expect(stale.status).toBe(200)
    }
  })

  test('a 304 still needs the key and the link', async () => {
    const etag = (await get(`/v1/qr/${link.id}`, { key })).headers.get('etag')!
    expect((await get(`/v1/qr/${link.id}`, { headers: { 'if-none-match': etag } })).status).toBe(401)
    expect((await get(`/v1/qr/${link.id}`, { key: otherKey, headers: { 'if-none-match': etag } })).status).toBe(404)
  })

  test('the ETag depends on every parameter and is stable, even after the cache is emptied', async () => {
    const etag = async (q: string) => (await get(`/v1/qr/${link.id}?${q}`, { key })).headers.get('etag')
    const base = await etag('format=png')
    const variants = await Promise.all(['format=svg', 'format=pdf', 'size=513', 'margin=3', 'ecc=H', 'fg=%23111111', 'bg=%23eeeeee'].map(etag))
    expect(new Set([base, ...variants]).size).toBe(8)
    renderedCache.clear()
    expect(await etag('format=png')).toBe(base)
    expect(await etag('format=pdf')).toBe(variants[1]!)
  })

  test('rendering is deterministic, PDF included', async () => {
    for (const format of ['png', 'svg', 'pdf'] as const) {
      const r = { format, data: link.shortUrl, size: 300, margin: 4, ecc: 'M' as const, fg: '#000000', bg: '#ffffff' }
      const [a, b] = [await renderUncached(r), await renderUncached(r)]
      expect(Buffer.from(a.body).equals(Buffer.from(b.body))).toBe(true)
      expect(a.etag).toBe(b.etag)
    }
  })

  test('repeated requests are served from the cache', async () => {
    renderedCache.clear()
    await get(renderPath(link.shortUrl, '&size=700'))
    const hits = renderedCache.hits
    await get(renderPath(link.shortUrl, '&size=700'))
    expect(renderedCache.hits).toBe(hits + 1)
  })

  test('the LRU is bounded by entries and by bytes, and evicts the least recently used', () => {
    const lru = new LruCache<Uint8Array>(3, 100, (v) => v.byteLength)
    lru.set('a', new Uint8Array(10))
    lru.set('b', new Uint8Array(10))
    lru.set('c', new Uint8Array(10))
    expect(lru.get('a')).toBeDefined() // a is now the most recent
    lru.set('d', new Uint8Array(10))
    expect(lru.get('b')).toBeUndefined()
    expect(lru.size).toBe(3)
    lru.set('big', new Uint8Array(80))
    expect(lru.bytes).toBeLessThanOrEqual(100)
    expect(lru.get('big')).toBeDefined()
    lru.set('huge', new Uint8Array(101))
    expect(lru.get('huge')).toBeUndefined()
    expect(renderedCache.maxEntries).toBe(500)
  })
})

describe('colour helpers', () => {
  test('normalise #rgb and #rrggbb only', () => {
    expect(normaliseColour('#ABC')).toBe('#aabbcc')
    expect(normaliseColour('#A1b2C3')).toBe('#a1b2c3')
    for (const bad of ['abc', '#abcd', 'red', '#12345g', 'rgb(0,0,0)', '']) expect(normaliseColour(bad)).toBeUndefined()
  })

  test('WCAG contrast', () => {
    expect(contrastRatio('#000000', '#ffffff')).toBeCloseTo(21, 5)
    expect(contrastRatio('#ffffff', '#ffffff')).toBe(1)
  })
})

describe('OpenAPI', () => {
  test('documents both routes with binary media types, the public one without security', async () => {
    const doc = await body(await get('/v1/openapi.json'))
    await SwaggerParser.validate(structuredClone(doc))
    const render = doc.paths['/qr/render'].get
    expect(render.security).toEqual([])
    expect(render.tags).toEqual(['QR codes'])
    expect(Object.keys(render.responses['200'].content)).toEqual(['image/png'])
    expect(render.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['bg', 'data', 'ecc', 'fg', 'margin', 'size'])
    const file = doc.paths['/qr/{linkId}'].get
    expect(file.security).toEqual([{ bearer: [] }])
    expect(file['x-permission']).toBe('links:read')
    expect(Object.keys(file.responses['200'].content)).toEqual(['image/png', 'image/svg+xml', 'application/pdf'])
    expect(file.responses['404'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' })
    const size = file.parameters.find((p: { name: string }) => p.name === 'size').schema
    expect(size).toMatchObject({ type: 'integer', minimum: 64, maximum: 4096, default: 512 })
  })
})
