// QR rendering, pure and HTTP-free: one module matrix (from `qrcode`) and three renderers that draw it.
//  - SVG: one <path> of the dark modules (horizontal runs merged), in module units under a viewBox, so it
//    scales without blur; width and height are the requested size.
//  - PNG: our own encoder, a 1-bit palette image (bg = index 0, fg = index 1) of exactly size x size pixels.
//    Modules are whole pixels (no blurred or uneven modules); what does not divide evenly goes to the quiet
//    zone, so the margin is at least the one asked for.
//  - PDF (pdf-lib): a page of exactly size x size points, a background rectangle and one filled vector path
//    made of one rectangle per run of dark modules. No raster image anywhere.
// Rendering is deterministic: the same input gives the same bytes, so ETags hold across restarts and nodes.
import { deflateSync } from 'node:zlib'
import { fill, PDFDocument, popGraphicsState, pushGraphicsState, rectangle, setFillingRgbColor, type PDFOperator } from 'pdf-lib'
import QRCode from 'qrcode'
import { sizeTooSmall, textNotEncodable, textTooLong } from './errors'

export type Ecc = 'L' | 'M' | 'Q' | 'H'
export type QrFormat = 'png' | 'svg' | 'pdf'

export const ECC_LEVELS: readonly Ecc[] = ['L', 'M', 'Q', 'H']
export const QR_FORMATS: readonly QrFormat[] = ['png', 'svg', 'pdf']
export const CONTENT_TYPES: Record<QrFormat, string> = { png: 'image/png', svg: 'image/svg+xml', pdf: 'application/pdf' }

export const QR_LIMITS = {
  size: { min: 64, max: 4096, default: 512 },
  margin: { min: 0, max: 16, default: 4 },
  ecc: 'M' as Ecc,
  fg: '#000000',
  bg: '#ffffff',
  /** Colours closer than this (WCAG contrast ratio) are refused: scanners cannot tell them apart reliably. */
  minContrast: 3,
  /** Longest text a QR code is rendered for. */
  maxDataLength: 2048,
}

export interface QrStyle {
  /** Pixels (PNG), user units of width/height (SVG) or points (PDF), quiet zone included. */
  size: number
  /** Quiet zone, in modules. */
  margin: number
  /** `#rrggbb` */
  fg: string
  /** `#rrggbb` */
  bg: string
}

export interface QrMatrix {
  /** The text encoded, exactly. */
  text: string
  /** Modules per side, without the quiet zone. */
  modules: number
  version: number
  ecc: Ecc
  /** modules * modules, row-major; 1 = dark. */
  data: Uint8Array
}

/** The module matrix of `text` at error-correction level `ecc` (version and mask chosen by qrcode). */
export function qrMatrix(text: string, ecc: Ecc): QrMatrix {
  let code: QRCode.QRCode
  try {
    code = QRCode.create(text, { errorCorrectionLevel: ecc })
  } catch (err) {
    const message = (err as Error).message
    if (/too big|amount of data/i.test(message)) throw textTooLong(ecc)
    throw textNotEncodable(message)
  }
  return { text, modules: code.modules.size, version: code.version, ecc, data: Uint8Array.from(code.modules.data, (v) => (v ? 1 : 0)) }
}

/** Runs of dark modules in each row: [x, y, length] in module units, quiet zone excluded. */
function darkRuns(m: QrMatrix): [number, number, number][] {
  const runs: [number, number, number][] = []
  const n = m.modules
  for (let y = 0; y < n; y++) {
    let x = 0
    while (x < n) {
      if (!m.data[y * n + x]) {
        x++
        continue
      }
      const start = x
      while (x < n && m.data[y * n + x]) x++
      runs.push([start, y, x - start])
    }
  }
  return runs
}

// ---------------------------------------------------------------------------------------------------------------
// Colours
// ---------------------------------------------------------------------------------------------------------------

const HEX_COLOUR = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i
export const HEX_COLOUR_PATTERN = '^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$'

/** `#rgb` or `#rrggbb` as lower-case `#rrggbb`, or undefined when it is neither. */
export function normaliseColour(value: string): string | undefined {
  if (!HEX_COLOUR.test(value)) return undefined
  const hex = value.slice(1).toLowerCase()
  return `#${hex.length === 3 ? [...hex].map((c) => c + c).join('') : hex}`
}

export function rgb(colour: string): [number, number, number] {
  const n = Number.parseInt(colour.slice(1), 16)
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255]
}

/** WCAG 2 contrast ratio of two `#rrggbb` colours, 1 (same) to 21 (black on white). */
export function contrastRatio(a: string, b: string): number {
  const luminance = (c: string) => {
    const [r, g, bl] = rgb(c).map((v) => {
      const s = v / 255
      return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4
    }) as [number, number, number]
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl
  }
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number]
  return (hi + 0.05) / (lo + 0.05)
}

// ---------------------------------------------------------------------------------------------------------------
// SVG
// ---------------------------------------------------------------------------------------------------------------

/** Inline SVG: a background rect and one path of the dark modules, in module units (quiet zone included). */
export function renderSvg(m: QrMatrix, style: QrStyle): string {
  const total = m.modules + 2 * style.margin
  const d = darkRuns(m)
    .map(([x, y, len]) => `M${x + style.margin} ${y + style.margin}h${len}v1h-${len}z`)
    .join('')
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${style.size}" height="${style.size}" viewBox="0 0 ${total} ${total}" shape-rendering="crispEdges">` +
    `<rect width="${total}" height="${total}" fill="${style.bg}"/>` +
    `<path fill="${style.fg}" d="${d}"/>` +
    `</svg>`
  )
}

// ---------------------------------------------------------------------------------------------------------------
// PNG
// ---------------------------------------------------------------------------------------------------------------

const CRC_TABLE = (() => {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c >>> 0
  }
  return table
})()

function crc32(bytes: Uint8Array, crc = 0xffffffff): number {
  for (let i = 0; i < bytes.length; i++) crc = CRC_TABLE[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8)
  return crc
}

function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length)
  const view = new DataView(out.buffer)
  view.setUint32(0, data.length)
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i)
  out.set(data, 8)
  view.setUint32(8 + data.length, (crc32(out.subarray(4, 8 + data.length)) ^ 0xffffffff) >>> 0)
  return out
}

const PNG_SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)

/** Pixel layout of the PNG: whole-pixel modules, the remainder split over the quiet zone. */
export function pngLayout(modules: number, style: QrStyle) {
  const total = modules + 2 * style.margin
  const scale = Math.floor(style.size / total)
  if (scale < 1) throw sizeTooSmall(style.size, total)
  const offset = Math.floor((style.size - scale * modules) / 2)
  return { scale, offset }
}

/** A size x size 1-bit palette PNG. */
export function renderPng(m: QrMatrix, style: QrStyle): Uint8Array {
  const { size } = style
  const { scale, offset } = pngLayout(m.modules, style)
  const rowBytes = Math.ceil(size / 8)
  const stride = rowBytes + 1 // filter byte (0 = none) + packed pixels
  const raw = new Uint8Array(stride * size) // all zero: filter 0 and background (palette index 0)
  const row = new Uint8Array(rowBytes)
  for (let y = 0; y < m.modules; y++) {
    row.fill(0)
    for (let x = 0; x < m.modules; x++) {
      if (!m.data[y * m.modules + x]) continue
      const from = offset + x * scale
      for (let px = from; px < from + scale; px++) row[px >> 3]! |= 0x80 >> (px & 7)
    }
    const top = offset + y * scale
    for (let py = top; py < top + scale; py++) raw.set(row, py * stride + 1)
  }
  const header = new Uint8Array(13)
  const hv = new DataView(header.buffer)
  hv.setUint32(0, size)
  hv.setUint32(4, size)
  header.set([1, 3, 0, 0, 0], 8) // bit depth 1, colour type 3 (palette), deflate, adaptive filtering, no interlace
  const palette = Uint8Array.from([...rgb(style.bg), ...rgb(style.fg)])
  const parts = [
    PNG_SIGNATURE,
    pngChunk('IHDR', header),
    pngChunk('PLTE', palette),
    pngChunk('IDAT', deflateSync(raw, { level: 6 })),
    pngChunk('IEND', new Uint8Array(0)),
  ]
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

// ---------------------------------------------------------------------------------------------------------------
// PDF
// ---------------------------------------------------------------------------------------------------------------

const round = (v: number) => Math.round(v * 10_000) / 10_000

/** One page of exactly size x size points: the background, then the dark modules as one filled vector path. */
export async function renderPdf(m: QrMatrix, style: QrStyle): Promise<Uint8Array> {
  // updateMetadata: false keeps creation and modification dates out, so the bytes are the same every time.
  const doc = await PDFDocument.create({ updateMetadata: false })
  doc.setTitle(`QR code: ${m.text}`)
  doc.setSubject(m.text)
  doc.setCreator('lnk')
  doc.setProducer('lnk')
  const { size, margin } = style
  const page = doc.addPage([size, size])
  const unit = size / (m.modules + 2 * margin)
  const colour = (c: string) => {
    const [r, g, b] = rgb(c)
    return setFillingRgbColor(round(r / 255), round(g / 255), round(b / 255))
  }
  const ops: PDFOperator[] = [pushGraphicsState(), colour(style.bg), rectangle(0, 0, size, size), fill(), colour(style.fg)]
  // PDF's origin is bottom-left; rows count from the top. Every run is a rectangle (`re`) of one path, filled
  // once, so rasterisers draw no seams between neighbours.
  for (const [x, y, len] of darkRuns(m)) {
    const left = round((x + margin) * unit)
    const right = round((x + margin + len) * unit)
    const top = round(size - (y + margin) * unit)
    const bottom = round(size - (y + margin + 1) * unit)
    ops.push(rectangle(left, bottom, round(right - left), round(top - bottom)))
  }
  ops.push(fill(), popGraphicsState())
  page.pushOperators(...ops)
  return doc.save({ useObjectStreams: false })
}
