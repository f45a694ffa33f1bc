// QR benchmark (run by hand: `bun run scripts/bench/qr.ts`). Renders per second of PNG codes, cold (every
// render a new short URL, so nothing comes from the cache) and cached, straight from the renderer and through
// the app (GET /v1/qr/render via app.handle, no network); SVG, PDF and 4096 px PNG cold for comparison, and
// qrcode's own toBuffer PNG as a reference. Every phase is bounded by an iteration count and a time budget
// (BENCH_MAX_MS per phase, default 3000). In process, single-threaded, on a temporary database.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import QRCode from 'qrcode'
import { createApp } from '../../src/app'
import { loadConfig } from '../../src/platform/config'
import { silentLogger } from '../../src/platform/log'
import { renderedCache, renderQr, renderUncached, type QrRequest } from '../../src/modules/qr/cache'
import { createRuntime } from '../../src/runtime'

const MAX_MS = Number(process.env.BENCH_MAX_MS ?? 3000)
const MAX_ITERATIONS = Number(process.env.BENCH_MAX_ITERATIONS ?? 200_000)
const ORIGIN = 'http://localhost:8080'

const style = { size: 512, margin: 4, ecc: 'M' as const, fg: '#000000', bg: '#ffffff' }
const shortUrl = (i: number) => `${ORIGIN}/${i.toString(36).padStart(7, 'b')}`
const request = (i: number, extra: Partial<QrRequest> = {}): QrRequest => ({ format: 'png', data: shortUrl(i), ...style, ...extra })

interface Result {
  name: string
  ops: number
  ms: number
  bytes: number
}

let seq = 1_000_000
async function phase(name: string, once: (i: number) => Promise<number> | number, maxIterations = MAX_ITERATIONS): Promise<Result> {
  for (let i = 0; i < 20; i++) await once(seq++) // warm-up
  let ops = 0
  let bytes = 0
  const start = performance.now()
  while (ops < maxIterations && performance.now() - start < MAX_MS) {
    bytes += await once(seq++)
    ops++
  }
  return { name, ops, ms: performance.now() - start, bytes }
}

const results: Result[] = []

// Renderer, cold: a new short URL every time, so every call builds the matrix and encodes.
results.push(await phase('png 512 px, cold (renderer)', async (i) => (await renderUncached(request(i))).body.byteLength))
results.push(await phase('png 4096 px, cold (renderer)', async (i) => (await renderUncached(request(i, { size: 4096 }))).body.byteLength))
results.push(await phase('svg, cold (renderer)', async (i) => (await renderUncached(request(i, { format: 'svg' }))).body.byteLength))
results.push(await phase('pdf, cold (renderer)', async (i) => (await renderUncached(request(i, { format: 'pdf' }))).body.byteLength))
results.push(
  await phase(
    'reference: qrcode.toBuffer png 512 px',
    async (i) => (await QRCode.toBuffer(shortUrl(i), { width: 512, margin: 4, errorCorrectionLevel: 'M' })).byteLength,
  ),
)

// Renderer, cached: the same 100 codes over and over (all LRU hits after the first round).
renderedCache.clear()
results.push(await phase('png 512 px, cached (renderer)', async (i) => (await renderQr(request(i % 100))).body.byteLength))

// Through the app: the public renderer's whole request path (routing, checks, cache, headers).
const dir = mkdtempSync(join(tmpdir(), 'lnk-bench-qr-'))
const rt = createRuntime(loadConfig({ LNK_DATA_DIR: dir, LNK_BASE_URL: ORIGIN, LNK_LOG_LEVEL: 'silent' }), { log: silentLogger })
const app = createApp(rt)
const get = async (data: string) => {
  const res = await app.handle(new Request(`${ORIGIN}/v1/qr/render?data=${encodeURIComponent(data)}&size=512`))
  if (res.status !== 200) throw new Error(`GET /v1/qr/render answered ${res.status}: ${await res.text()}`)
  return (await res.arrayBuffer()).byteLength
}
renderedCache.clear()
results.push(await phase('GET /v1/qr/render png 512, cold (app)', (i) => get(shortUrl(i))))
renderedCache.clear()
results.push(await phase('GET /v1/qr/render png 512, cached (app)', (i) => get(shortUrl(i % 100))))
const etag = (await app.handle(new Request(`${ORIGIN}/v1/qr/render?data=${encodeURIComponent(shortUrl(1))}&size=512`))).headers.get('etag')!
results.push(
  await phase('GET /v1/qr/render, If-None-Match -> 304 (app)', async () => {
    const res = await app.handle(new Request(`${ORIGIN}/v1/qr/render?data=${encodeURIComponent(shortUrl(1))}&size=512`, { headers: { 'if-none-match': etag } }))
    if (res.status !== 304) throw new Error(`expected 304, got ${res.status}`)
    return 0
  }),
)
rt.db.close()
rmSync(dir, { recursive: true, force: true })

const pad = Math.max(...results.map((r) => r.name.length))
console.log(
  `QR benchmark (bun ${Bun.version}, ${process.platform}/${process.arch}, each phase <= ${MAX_MS} ms and <= ${MAX_ITERATIONS} iterations, single-threaded)`,
)
console.log(`${'phase'.padEnd(pad)}  ${'renders/s'.padStart(10)}  ${'mean ms'.padStart(8)}  ${'avg bytes'.padStart(9)}  ${'runs'.padStart(7)}`)
for (const r of results) {
  const perSecond = (r.ops / r.ms) * 1000
  console.log(
    `${r.name.padEnd(pad)}  ${perSecond.toFixed(0).padStart(10)}  ${(r.ms / r.ops).toFixed(3).padStart(8)}  ${(r.bytes / r.ops).toFixed(0).padStart(9)} ` +
      ` ${String(r.ops).padStart(7)}`,
  )
}
console.log(
  `cache: ${renderedCache.size} entries, ${(renderedCache.bytes / 1024).toFixed(0)} KiB (bounds ${renderedCache.maxEntries} entries, ` +
    `${renderedCache.maxBytes / 1024 / 1024} MiB)`,
)
