// `lnk admin export` / `import`: every table of one database as NDJSON (gzip when the name ends in .gz), read
// from one snapshot and written in one transaction, on either engine (docs/scale-out.md). Line 1 is a header
// naming the schema and each table's row count; then one line per row, tables parents first, with the
// SQLite column names: {"t":"links","r":{"id":"…","is_active":true,"tags":["a"],…}}. Booleans are true/false,
// JSON columns JSON, blobs {"$blob":"<base64>"}, times and counters numbers. Neither side ever holds more
// than a batch of rows.
import { createReadStream, createWriteStream, existsSync, rmSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import { createInterface } from 'node:readline'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createGunzip, createGzip } from 'node:zlib'
import { EMBEDDED_MIGRATIONS } from './migrations.generated'
import { AppError } from '../platform/errors'
import { badLine, dirNotFound, fileExists, fileNotFound, schemaMismatch, targetNotEmpty } from './transfer-errors'
import { TRANSFER_TABLES, type Loader, type Row, type TableSpec, type TransferSource, type TransferTarget } from './transfer-tables'

export const EXPORT_FORMAT = 'lnk-export'
export const EXPORT_VERSION = 1

/** The schema an export describes: the latest migration of the one table list (PostgreSQL's is derived from it). */
export const SCHEMA_TAG = EMBEDDED_MIGRATIONS.at(-1)!.tag

export interface ExportHeader {
  format: typeof EXPORT_FORMAT
  version: typeof EXPORT_VERSION
  schema: string
  exportedAt: string
  tables: Record<string, number>
  /** Each sequence's high-water mark: new rows must number above it even where the last rows were deleted. */
  sequences: Record<string, number>
}

export interface TransferSummary {
  file: string
  schema: string
  tables: Record<string, number>
  rows: number
}

/** Rows per multi-row insert and per read: few enough parameters for either engine (SQLite allows 32,766). */
export const batchSize = (table: TableSpec) => Math.max(1, Math.min(500, Math.floor(20_000 / table.columns.length)))

const BLOB = '$blob'

function encodeRow(table: TableSpec, row: Row): string {
  const r: Row = {}
  for (const { name, kind } of table.columns) {
    const v = row[name]
    r[name] = kind === 'blob' && v != null ? { [BLOB]: Buffer.from(v as Uint8Array).toString('base64') } : v
  }
  return `${JSON.stringify({ t: table.name, r })}\n`
}

const TYPE_OF: Record<string, string> = { text: 'string', integer: 'number', real: 'number', boolean: 'boolean' }

/** The row of a line in the travelling form, or why it is not one. */
function decodeRow(table: TableSpec, r: unknown): Row | string {
  if (!r || typeof r !== 'object' || Array.isArray(r)) return 'r must be an object of columns'
  const given = r as Row
  const row: Row = {}
  for (const { name, kind } of table.columns) {
    if (!Object.hasOwn(given, name)) return `column ${table.name}.${name} is missing`
    const v = given[name]
    if (v === null || kind === 'json') row[name] = v
    else if (kind === 'blob') {
      const b64 = (v as Record<string, unknown>)[BLOB]
      if (typeof b64 !== 'string') return `${table.name}.${name} must be {"${BLOB}":"<base64>"} or null`
      row[name] = Buffer.from(b64, 'base64')
    } else if (typeof v !== TYPE_OF[kind] || (kind === 'integer' && !Number.isSafeInteger(v)))
      return `${table.name}.${name} must be ${kind === 'integer' ? 'a whole number' : `a ${TYPE_OF[kind]}`} or null`
    else row[name] = v
  }
  if (Object.keys(given).length !== table.columns.length)
    return `${table.name} has no column ${Object.keys(given).find((k) => !table.columns.some((c) => c.name === k))}`
  return row
}

/** Writes the source's tables to `file` (a new file), from one snapshot; removes the file if anything fails. */
export async function exportDatabase(source: TransferSource, file: string, now = Date.now()): Promise<TransferSummary> {
  if (existsSync(file)) throw fileExists(file)
  if (!existsSync(dirname(file))) throw dirNotFound(dirname(file))
  await source.checkSchema()
  let created = false
  try {
    return await source.snapshot(async (snapshot) => {
      const tables: Record<string, number> = {}
      const sequences: Record<string, number> = {}
      for (const table of TRANSFER_TABLES) {
        tables[table.name] = await snapshot.count(table)
        if (table.sequence) sequences[table.name] = await snapshot.sequence(table)
      }
      const header: ExportHeader = {
        format: EXPORT_FORMAT,
        version: EXPORT_VERSION,
        schema: SCHEMA_TAG,
        exportedAt: new Date(now).toISOString(),
        tables,
        sequences,
      }
      async function* lines() {
        yield `${JSON.stringify(header)}\n`
        for (const table of TRANSFER_TABLES) {
          let n = 0
          for await (const batch of snapshot.rows(table, batchSize(table))) {
            n += batch.length
            yield batch.map((row) => encodeRow(table, row)).join('')
          }
          // The header's counts and the rows come from one snapshot; anything else is a bug worth stopping on.
          if (n !== tables[table.name]) throw new Error(`${table.name}: counted ${tables[table.name]} row(s), read ${n}; the snapshot did not hold`)
        }
      }
      const out = createWriteStream(file, { flags: 'wx' }).on('open', () => (created = true))
      if (file.endsWith('.gz')) await pipeline(Readable.from(lines()), createGzip(), out)
      else await pipeline(Readable.from(lines()), out)
      return { file, schema: SCHEMA_TAG, tables, rows: Object.values(tables).reduce((a, b) => a + b, 0) }
    })
  } catch (err) {
    if (created) rmSync(file, { force: true })
    throw err
  }
}

/** The file's lines, gunzipped when it starts with gzip's magic bytes. */
async function openLines(file: string) {
  if (!existsSync(file) || !statSync(file).isFile()) throw fileNotFound(file)
  const magic = await Bun.file(file).slice(0, 2).bytes()
  const raw = createReadStream(file)
  const input = magic[0] === 0x1f && magic[1] === 0x8b ? raw.pipe(createGunzip()) : raw
  // A corrupt gzip stream fails the gunzip, which readline does not hear of: end the lines with its error.
  const reader = createInterface({ input, crlfDelay: Infinity })
  let failure: Error | undefined
  for (const stream of new Set([raw, input])) {
    stream.on('error', (err) => {
      failure ??= err
      reader.close()
    })
  }
  const iterator = reader[Symbol.asyncIterator]()
  let n = 0
  return {
    /** The next non-empty line and its number, or null at the end. */
    async next(): Promise<{ n: number; text: string } | null> {
      for (;;) {
        let r: IteratorResult<string>
        try {
          r = await iterator.next()
        } catch (err) {
          failure ??= err as Error
          r = { done: true, value: undefined }
        }
        if (failure) throw badLine(file, n + 1, `cannot read the file: ${failure.message}`)
        if (r.done) return null
        n++
        if (r.value.trim()) return { n, text: r.value }
      }
    },
    close() {
      reader.close()
      raw.destroy()
    },
  }
}

function parseLine(file: string, line: { n: number; text: string }): unknown {
  try {
    return JSON.parse(line.text)
  } catch (err) {
    throw badLine(file, line.n, `not a JSON line (${(err as Error).message})`)
  }
}

function readHeader(file: string, value: unknown, n: number): ExportHeader {
  const h = value as Partial<ExportHeader> | null
  if (!h || h.format !== EXPORT_FORMAT) throw badLine(file, n, `not an lnk export (the first line must be its header with format "${EXPORT_FORMAT}")`)
  if (h.version !== EXPORT_VERSION) throw badLine(file, n, `export format version ${h.version} is not ${EXPORT_VERSION}; use the lnk version that wrote it`)
  if (typeof h.schema !== 'string') throw badLine(file, n, 'the header names no schema')
  if (h.schema !== SCHEMA_TAG) throw schemaMismatch(file, h.schema, SCHEMA_TAG)
  const counts = h.tables ?? {}
  for (const t of TRANSFER_TABLES) if (!Number.isSafeInteger(counts[t.name])) throw badLine(file, n, `the header has no row count for ${t.name}`)
  const extra = Object.keys(counts).filter((name) => !TRANSFER_TABLES.some((t) => t.name === name))
  if (extra.length) throw badLine(file, n, `the header names tables this schema does not have: ${extra.join(', ')}`)
  for (const [name, value] of Object.entries(h.sequences ?? {}))
    if (!Number.isSafeInteger(value)) throw badLine(file, n, `the header's sequence of ${name} is not a whole number`)
  return h as ExportHeader
}

/** One line of engine error text: drivers may spread theirs over several. */
const oneLine = (text: string) => text.replace(/\s*\n\s*/g, ' ').trim()

/** What the engine said: drizzle wraps the driver's error in one that quotes the whole statement. */
function engineMessage(err: unknown): string {
  let e = err
  while (e instanceof Error && e.cause instanceof Error) e = e.cause
  return e instanceof Error ? e.message : String(e)
}

/**
 * Loads `file` into the target opened by `open`: the header is checked before the target is touched, the
 * target is migrated and must be empty, and every row goes in within one transaction, so a failure leaves
 * the target as empty as it was.
 */
export async function importDatabase(file: string, open: () => Promise<TransferTarget>): Promise<TransferSummary> {
  const lines = await openLines(file)
  try {
    const first = await lines.next()
    if (!first) throw badLine(file, 1, 'the file is empty')
    const header = readHeader(file, parseLine(file, first), first.n)
    const target = await open()
    try {
      await target.migrate()
      const occupied = await target.occupied()
      if (Object.keys(occupied).length) throw targetNotEmpty(target.label, occupied)
      try {
        await target.transaction((loader) => loadRows(file, header, lines, loader))
      } catch (err) {
        const why = `${oneLine(engineMessage(err))}; the import was rolled back, ${target.label} holds nothing of it`
        throw err instanceof AppError ? new AppError(err.code, why) : new Error(`import into ${target.label} failed: ${why}`)
      }
    } finally {
      await target.close()
    }
    return { file, schema: header.schema, tables: header.tables, rows: Object.values(header.tables).reduce((a, b) => a + b, 0) }
  } finally {
    lines.close()
  }
}

type Lines = Awaited<ReturnType<typeof openLines>>

async function loadRows(file: string, header: ExportHeader, lines: Lines, loader: Loader): Promise<void> {
  const index = new Map(TRANSFER_TABLES.map((t, i) => [t.name, i]))
  const seen = new Map<string, number>()
  const highest = new Map<string, number>()
  let current = -1
  let batch: Row[] = []
  const flush = async () => {
    if (batch.length) await loader.insert(TRANSFER_TABLES[current]!, batch)
    batch = []
  }
  for (let line = await lines.next(); line; line = await lines.next()) {
    const value = parseLine(file, line) as { t?: unknown; r?: unknown } | null
    const at = typeof value?.t === 'string' ? index.get(value.t) : undefined
    if (at === undefined) throw badLine(file, line.n, `unknown table ${JSON.stringify(value?.t)}`)
    if (at < current)
      throw badLine(file, line.n, `rows of ${TRANSFER_TABLES[at]!.name} after rows of ${TRANSFER_TABLES[current]!.name}: the file is not in foreign-key order`)
    if (at !== current) {
      await flush()
      current = at
    }
    const table = TRANSFER_TABLES[at]!
    const row = decodeRow(table, value!.r)
    if (typeof row === 'string') throw badLine(file, line.n, row)
    if (table.sequence) highest.set(table.name, Math.max(highest.get(table.name) ?? 0, Number(row[table.sequence] ?? 0)))
    seen.set(table.name, (seen.get(table.name) ?? 0) + 1)
    batch.push(row)
    if (batch.length >= batchSize(table)) await flush()
  }
  await flush()
  for (const table of TRANSFER_TABLES) {
    const expected = header.tables[table.name]!
    const read = seen.get(table.name) ?? 0
    if (read !== expected) throw badLine(file, 1, `the header announces ${expected} row(s) of ${table.name}, the file holds ${read} (is it cut short?)`)
    const stored = await loader.count(table)
    if (stored !== expected) throw new Error(`${table.name} holds ${stored} row(s) after the import, not ${expected}`)
    if (table.sequence) await loader.advanceSequence(table, Math.max(highest.get(table.name) ?? 0, header.sequences?.[table.name] ?? 0))
  }
}
