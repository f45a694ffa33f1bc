// Pasted lines or a CSV file as create bodies. Without a header: one destination per line, optionally
// "destination,slug". With a header row naming destinationUrl: CSV whose columns are create-body fields.

export interface Row {
  /** The 1-based line of the input, so a person can find it. */
  line: number
  body: Record<string, unknown>
}

const NUMBERS = new Set(['clickLimit', 'uniqueIpLimit', 'redirectStatus'])
const FLAGS = new Set(['publicStatsEnabled', 'deepLinkEnabled', 'captchaEnabled', 'consentRequired', 'conversionTracking'])

/** One CSV record's cells: commas separate, double quotes enclose, "" inside quotes is a quote. */
export function cells(line: string): string[] {
  const out: string[] = []
  let cell = ''
  let quoted = false
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') (cell += '"'), i++
      else if (c === '"') quoted = false
      else cell += c
    } else if (c === '"') quoted = true
    else if (c === ',') out.push(cell.trim()), (cell = '')
    else cell += c
  }
  out.push(cell.trim())
  return out
}

function value(column: string, text: string): unknown {
  if (column === 'tags')
    return text
      .split(/[;|,]/)
      .map((t) => t.trim())
      .filter(Boolean)
  if (NUMBERS.has(column) && /^\d+$/.test(text)) return Number(text)
  if (FLAGS.has(column) && /^(true|false|yes|no|1|0)$/i.test(text)) return /^(true|yes|1)$/i.test(text)
  return text
}

export function parseBulk(text: string): Row[] {
  const lines = text
    .split(/\r?\n/)
    .map((l, i) => ({ line: i + 1, text: l }))
    .filter((l) => l.text.trim() !== '')
  if (!lines.length) return []
  const head = cells(lines[0]!.text)
  const header = head.includes('destinationUrl') ? head : null
  const rows = header ? lines.slice(1) : lines
  return rows.map(({ line, text }) => {
    const parts = cells(text)
    const body: Record<string, unknown> = {}
    if (header) {
      header.forEach((column, i) => {
        const cell = parts[i]
        if (column && cell) body[column] = value(column, cell)
      })
    } else {
      body.destinationUrl = parts[0] ?? ''
      if (parts[1]) body.slug = parts[1]
    }
    return { line, body }
  })
}
