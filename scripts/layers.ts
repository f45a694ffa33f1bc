// The layers of src/ and the imports that break them, over the same import graph as the cycle check
// (scripts/import-cycles.ts: value, type and dynamic imports alike). `bun scripts/layers.ts` prints each
// offending import and exits 1 when there is one; the test suite runs the same check (test/layers.test.ts).
//
// Layers, bottom to top; a file may import its own layer and the layers below it, never one above:
//   0 platform  src/platform/, src/net/ (outbound HTTP and its egress policy), src/context.ts
//   1 db        src/db/
//   2 events    src/events/, src/jobs/ (one layer: the worker drains the outbox)
//   3 http      src/http/ (the kernel: envelope, status table, auth macro, idempotency, request context)
//   4 modules   src/modules/ (module.ts, the contract every area meets, and one folder per area)
//   5 app       src/runtime.ts, src/app.ts, src/server.ts, src/main.ts, src/cli/
// A module's public surface is its index.ts and its model.ts: any file outside modules/<area>/ (another area,
// module.ts, the app, the CLI) imports only those two files of it. modules/module.ts, the contract every area
// meets, imports no area at all. A file of src/ in no layer is an offence too, so a new folder has to be
// placed here first.
import { relative, resolve } from 'node:path'
import { importGraph } from './import-cycles'

export const LAYERS = ['platform', 'db', 'events', 'http', 'modules', 'app'] as const
export type Layer = (typeof LAYERS)[number]

/** The layer of a path relative to src/, or undefined when it belongs to none. */
export function layerOf(file: string): Layer | undefined {
  const top = file.split('/')[0]!
  if (top === 'platform' || top === 'net' || file === 'context.ts') return 'platform'
  if (top === 'db') return 'db'
  if (top === 'events' || top === 'jobs') return 'events'
  if (top === 'http') return 'http'
  if (top === 'modules') return 'modules'
  if (top === 'cli' || ['runtime.ts', 'app.ts', 'server.ts', 'main.ts'].includes(file)) return 'app'
  return undefined
}

/** The area a file of modules/<area>/ belongs to (module.ts belongs to none). */
const areaOf = (file: string) => (/^modules\/[^/]+\//.test(file) ? file.split('/')[1] : undefined)

/** index.ts and model.ts directly in the area's folder: what other areas and upper layers may import. */
const isPublic = (file: string) => /^modules\/[^/]+\/(index|model)\.ts$/.test(file)

/** Every import of `root` (a src/ folder) that breaks a rule, as `from -> to: why`. */
export function layerViolations(root: string): string[] {
  const found: string[] = []
  for (const [fromPath, targets] of importGraph(root)) {
    const from = relative(root, fromPath)
    const fromLayer = layerOf(from)
    if (fromLayer === undefined) {
      found.push(`${from}: in no layer`)
      continue
    }
    for (const toPath of targets) {
      const to = relative(root, toPath)
      const toLayer = layerOf(to)
      if (toLayer === undefined) continue // reported as its own file
      if (LAYERS.indexOf(toLayer) > LAYERS.indexOf(fromLayer)) found.push(`${from} -> ${to}: ${fromLayer} imports ${toLayer}, a layer above it`)
      const area = areaOf(to)
      if (area !== undefined && from === 'modules/module.ts') found.push(`${from} -> ${to}: the module contract imports no area`)
      else if (area !== undefined && areaOf(from) !== area && !isPublic(to))
        found.push(`${from} -> ${to}: into ${area}'s inner files (import its index.ts or model.ts)`)
    }
  }
  return found.sort()
}

if (import.meta.main) {
  const found = layerViolations(resolve(import.meta.dir, '../src'))
  for (const line of found) console.log(line)
  console.log(found.length ? `${found.length} import(s) break the layers of src/` : 'every import of src/ keeps to the layers')
  process.exit(found.length ? 1 : 0)
}
