// What a rollup bucket holds, as one mergeable value: people's clicks, bot hits, a sketch of the visitors
// and clicks per dimension. The click flush adds clicks to it; queries merge stored buckets into it.
import { Sketch, visitorEntry } from './hll'

export const DIMENSIONS = ['country', 'referrer', 'browser', 'os', 'device'] as const
export type Dimension = (typeof DIMENSIONS)[number]

/** Clicks per value of each dimension; '' is the unknown value (no country, a direct visit). */
export type DimCounts = Record<Dimension, Map<string, number>>

export interface ClickFacts {
  visitor: string
  isBot: boolean
  country: string | null
  referrer: string | null
  browser: string | null
  os: string | null
  device: string | null
}

const SEPARATOR = /[\t\n]/
const SEPARATORS = /[\t\n]/g

export class Figures {
  clicks = 0
  bots = 0
  readonly visitors = new Sketch()
  /** Null when dimensions are not wanted (timelines, top links): they are then neither parsed nor kept. */
  readonly dims: DimCounts | null

  constructor(withDims = true) {
    this.dims = withDims ? (Object.fromEntries(DIMENSIONS.map((d) => [d, new Map()])) as DimCounts) : null
  }

  /** `entry` is visitorEntry(c.visitor), when the caller adds the same click to several buckets. */
  addClick(c: ClickFacts, entry?: number) {
    if (c.isBot) {
      this.bots++
      return
    }
    this.clicks++
    this.visitors.addEntry(entry ?? visitorEntry(c.visitor))
    if (!this.dims) return
    this.bump('country', c.country)
    this.bump('referrer', c.referrer)
    this.bump('browser', c.browser)
    this.bump('os', c.os)
    this.bump('device', c.device)
  }

  private bump(d: Dimension, value: string | null, n = 1) {
    const m = this.dims![d]
    const k = value ?? ''
    m.set(k, (m.get(k) ?? 0) + n)
  }

  /** Adds a stored bucket (a rollup row). */
  addRow(row: { clicks: number; bots: number; visitors: Uint8Array | null; dims?: string | null }) {
    this.clicks += row.clicks
    this.bots += row.bots
    this.visitors.merge(row.visitors)
    if (this.dims && row.dims) {
      if (row.dims.charCodeAt(0) === 123 /* { */) this.addJsonDims(row.dims)
      else this.addDimsText(row.dims)
    }
  }

  /**
   * Adds stored buckets, their sketches in the order that merges fastest: dense ones first, then the
   * largest sparse ones, so fewer entries pass through the sparse form (the result is the same in any order).
   * With no dense one, the sparse table is sized once for every entry to come, `more` (added by the caller
   * afterwards) included.
   */
  addRows(rows: { clicks: number; bots: number; visitors: Uint8Array | null; dims?: string | null }[], more = 0) {
    const weight = (v: Uint8Array | null) => (Sketch.isDense(v) ? Number.POSITIVE_INFINITY : (v?.length ?? 0))
    rows.sort((a, b) => weight(b.visitors) - weight(a.visitors))
    if (!Sketch.isDense(rows[0]?.visitors)) {
      let entries = more
      for (const row of rows) entries += Sketch.sparseEntries(row.visitors)
      this.visitors.reserve(entries)
    }
    for (const row of rows) this.addRow(row)
  }

  /** Rows written before the compact form: {"country":{"DE":3},…}. */
  private addJsonDims(json: string) {
    const parsed = JSON.parse(json) as Partial<Record<Dimension, Record<string, number>>>
    for (const d of DIMENSIONS) {
      const counts = parsed[d]
      if (counts) for (const k in counts) this.bump(d, k, counts[k]!)
    }
  }

  private addDimsText(text: string) {
    const lines = text.split('\n')
    for (let i = 0; i < DIMENSIONS.length; i++) {
      const line = lines[i]
      if (!line) continue
      const m = this.dims![DIMENSIONS[i]!]
      const parts = line.split('\t')
      for (let j = 0; j + 1 < parts.length; j += 2) {
        const k = parts[j]!
        m.set(k, (m.get(k) ?? 0) + Number(parts[j + 1]))
      }
    }
  }

  /**
   * The dimensions as stored, compact: one line per dimension (country, referrer, browser, OS, device),
   * each `value<TAB>clicks` pairs joined by tabs. A third of the JSON's bytes, and no JSON to write or parse:
   * the flush rewrites this for every bucket it touches, and the bytes of link rows are most of its I/O.
   * No value holds a tab or a line break: countries are two capital letters, browsers, systems and devices
   * names the parser knows, and URL parsing drops them from hosts, though a host is still checked, being
   * the one value a visitor writes. A row that starts with `{` is the JSON form of earlier versions, still read.
   */
  dimsText(): string {
    if (!this.dims) return ''
    let out = ''
    for (let i = 0; i < DIMENSIONS.length; i++) {
      if (i) out += '\n'
      let first = true
      const check = DIMENSIONS[i] === 'referrer'
      for (const [value, n] of this.dims[DIMENSIONS[i]!]) {
        const k = check && SEPARATOR.test(value) ? value.replace(SEPARATORS, ' ') : value
        out += first ? `${k}\t${n}` : `\t${k}\t${n}`
        first = false
      }
    }
    return out
  }

  /** The `limit` most clicked values of a dimension; ties in value order, so answers are stable. */
  top(d: Dimension, limit: number): { value: string | null; clicks: number }[] {
    return [...this.dims![d]]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .slice(0, limit)
      .map(([k, n]) => ({ value: k === '' ? null : k, clicks: n }))
  }
}
