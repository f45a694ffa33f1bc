// Layers point down, and a module is reached only through its index.ts or model.ts (scripts/layers.ts names
// the layers; the architecture asks a test to fail on any import that breaks them).
import { expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { layerOf, layerViolations } from '../scripts/layers'
import { ROOT } from './helpers'

test('every import of src/ keeps to the layers', () => {
  expect(layerViolations(join(ROOT, 'src'))).toEqual([])
})

test('the layers, bottom to top', () => {
  expect(
    [
      'platform/errors.ts',
      'net/outbound.ts',
      'context.ts',
      'db/store.ts',
      'jobs/worker.ts',
      'events/outbox.ts',
      'http/auth.ts',
      'modules/module.ts',
      'modules/links/service.ts',
      'runtime.ts',
      'cli/admin.ts',
      'main.ts',
    ].map(layerOf),
  ).toEqual(['platform', 'platform', 'platform', 'db', 'events', 'events', 'http', 'modules', 'modules', 'app', 'app', 'app'])
})

test("the check finds an import up a layer, one into another area's inner files, and a file in no layer", () => {
  const dir = mkdtempSync(join(tmpdir(), 'lnk-layers-'))
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  try {
    // Allowed: down a layer, within an area, through another area's index (a folder import) and model.
    write('platform/clock.ts', 'export const now = () => 0\n')
    write('db/store.ts', "import { now } from '../platform/clock'\nexport const at = now\n")
    write('modules/links/service.ts', "import { at } from '../../db/store'\nexport const create = at\n")
    write('modules/links/model.ts', 'export type Link = { id: string }\n')
    write('modules/links/index.ts', "export { create } from './service'\n")
    write('modules/qr/index.ts', "import { create } from '../links'\nimport type { Link } from '../links/model'\nexport const qr = (l: Link) => create\n")
    write('runtime.ts', "import { qr } from './modules/qr'\nexport const rt = qr\n")
    expect(layerViolations(dir)).toEqual([])

    // Up a layer through a type import; into another area's inner file through a dynamic import.
    write('http/auth.ts', "import type { Link } from '../modules/links/model'\nexport type Caller = Link\n")
    write('modules/redirect/handler.ts', "export const load = () => import('../links/service')\n")
    write(
      'modules/module.ts',
      "import type { create } from './links/service'\nimport type { Link } from './links/model'\nexport type Make = typeof create | Link\n",
    )
    write('tools/x.ts', "import { now } from '../platform/clock'\nexport const x = now\n")
    expect(layerViolations(dir)).toEqual([
      'http/auth.ts -> modules/links/model.ts: http imports modules, a layer above it',
      'modules/module.ts -> modules/links/model.ts: the module contract imports no area',
      'modules/module.ts -> modules/links/service.ts: the module contract imports no area',
      "modules/redirect/handler.ts -> modules/links/service.ts: into links's inner files (import its index.ts or model.ts)",
      'tools/x.ts: in no layer',
    ])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
