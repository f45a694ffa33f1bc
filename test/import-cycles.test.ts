// Layers point down only: no file of src/ reaches itself through its imports, value or type (issue 12).
import { expect, test } from 'bun:test'
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { importCycles } from '../scripts/import-cycles'
import { ROOT } from './helpers'

test('src/ has no import cycle', () => {
  expect(importCycles(join(ROOT, 'src'))).toEqual([])
})

test('the check finds a cycle through a type import and a folder index', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lnk-cycles-'))
  try {
    mkdirSync(join(dir, 'area'))
    writeFileSync(join(dir, 'a.ts'), "import type { B } from './area'\nexport type A = B\n")
    writeFileSync(join(dir, 'area', 'index.ts'), "export { type C as B } from './c'\n")
    writeFileSync(join(dir, 'area', 'c.ts'), "import type { A } from '../a'\nexport type C = A | 1\n")
    writeFileSync(join(dir, 'lone.ts'), "import { x } from './missing'\n")
    expect(importCycles(dir)).toEqual([['a.ts', 'area/c.ts', 'area/index.ts']])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
