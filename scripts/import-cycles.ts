// The import graph of src/ (value and type imports alike) and its cycles, found as strongly connected
// components. `bun scripts/import-cycles.ts` prints each cycle and exits 1 when there is one; the test
// suite runs the same check (test/import-cycles.test.ts). The layer check (`bun scripts/layers.ts`,
// test/layers.test.ts) reads the same graph (importGraph).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const IMPORT = /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]/g
const DYNAMIC = /import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [path] : []
  })
}

function resolveImport(from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec)
  return [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts')].find((p) => existsSync(p) && statSync(p).isFile())
}

/** Each file of `root` with the files of `root` it imports. */
export function importGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  const files = sourceFiles(root)
  const known = new Set(files)
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    const targets = [...text.matchAll(IMPORT), ...text.matchAll(DYNAMIC)]
      .map((m) => resolveImport(file, m[1]!))
      .filter((p): p is string => p !== undefined && known.has(p))
    graph.set(file, [...new Set(targets)])
  }
  return graph
}

/** The import cycles: every strongly connected component of more than one file (or a file importing itself). */
export function importCycles(root: string): string[][] {
  const graph = importGraph(root)
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const cycles: string[][] = []
  let next = 0
  const visit = (v: string) => {
    index.set(v, next)
    low.set(v, next++)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) !== index.get(v)) return
    const component: string[] = []
    let w: string
    do {
      w = stack.pop()!
      onStack.delete(w)
      component.push(relative(root, w))
    } while (w !== v)
    if (component.length > 1 || graph.get(v)!.includes(v)) cycles.push(component.sort())
  }
  for (const file of graph.keys()) if (!index.has(file)) visit(file)
  return cycles
}

if (import.meta.main) {
  const cycles = importCycles(resolve(import.meta.dir, '../src'))
  for (const cycle of cycles) console.log(`cycle: ${cycle.join(' ↔ ')}`)
  console.log(cycles.length ? `${cycles.length} import cycle(s) in src/` : 'no import cycles in src/')
  process.exit(cycles.length ? 1 : 0)
}
