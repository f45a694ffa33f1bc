import { afterAll, describe, expect, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { t } from 'elysia'
import type { EventDefinition } from '../../../src/events/catalogue'
import { EVENT_CATALOGUE } from '../../../src/modules/webhooks/model'
import { eventTypes, tsType } from '../../../src/modules/webhooks/type-gen'
import { ROOT, tempDir } from '../../helpers'

// Shapes the real catalogue may not use yet, so the generator is tested on all of them.
const SYNTHETIC: EventDefinition[] = [
  {
    type: 'bridge_page.updated',
    description: 'Synthetic: composites, records, enums, nested arrays, optional fields.',
    data: t.Composite([
      t.Object({ id: t.String(), kind: t.Union([t.Literal('a'), t.Literal('b')]) }),
      t.Object({
        counts: t.Record(t.String(), t.Number()),
        extra: t.Optional(t.Union([t.String(), t.Null()])),
        note: t.Optional(t.String()),
        matrix: t.Array(t.Array(t.Integer())),
        items: t.Array(t.Object({ label: t.String(), 'x-odd key': t.Boolean() })),
        anything: t.Unknown(),
        size: t.Numeric(),
      }),
    ]),
  },
]

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

function tsc(files: Record<string, string>): { code: number; output: string } {
  const dir = tempDir('lnk-typegen-')
  dirs.push(dir)
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  const run = Bun.spawnSync(
    [
      join(ROOT, 'node_modules/.bin/tsc'),
      '--noEmit',
      '--strict',
      '--target',
      'es2022',
      '--module',
      'esnext',
      '--moduleResolution',
      'bundler',
      ...Object.keys(files),
    ],
    { cwd: dir, stdout: 'pipe', stderr: 'pipe' },
  )
  return { code: run.exitCode ?? -1, output: run.stdout.toString() + run.stderr.toString() }
}

const consumer = `import type { WebhookEvent, WebhookPayload, LinkClickedEvent } from './events'
export function describe(e: WebhookEvent): string {
  switch (e.type) {
    case 'link.clicked': return e.data.click.id + (e.data.click.referrer ?? 'direct') + e.data.link.shortUrl
    case 'link.updated': return e.data.changes.join(',') + e.data.slug
    case 'conversion.created': return String(e.data.conversion.value ?? 0) + (e.data.conversion.metadata?.['k'] ?? '')
    case 'link.created': return e.data.redirectStatus === 301 ? 'permanent' : String(e.data.clickLimit ?? 'none')
    default: return e.type
  }
}
export function count(p: WebhookPayload): number { return p.type === 'batch' ? p.events.length : 1 }
export const clicked: LinkClickedEvent = { id: 'evt_1', type: 'link.clicked', timestamp: '2026-01-01T00:00:00Z', mode: 'live',
  data: { click: { id: 'c', timestamp: 't', unique: true, referrer: null, userAgent: null, ruleId: null, variantId: 'v', destinationUrl: 'x' }, link: { id: 'l', slug: 's', domain: 'd', shortUrl: 'u', destinationUrl: 'x' } } }
`

describe('eventTypes("ts")', () => {
  test('declares one interface per event, the union and the batch', () => {
    const out = eventTypes('ts')
    for (const e of EVENT_CATALOGUE) expect(out).toContain(`type: ${JSON.stringify(e.type)}`)
    expect(out).toContain('export interface LinkClickedEvent {')
    expect(out).toContain('export type WebhookEvent =\n  | LinkCreatedEvent')
    expect(out).toContain("export interface WebhookBatch {\n  type: 'batch'")
    expect(out).toBe(eventTypes('ts'))
  })

  test('compiles with tsc --strict, narrows on type, and rejects misuse', () => {
    const ok = tsc({ 'events.ts': eventTypes('ts'), 'use.ts': consumer })
    expect(ok.output).toBe('')
    expect(ok.code).toBe(0)
    const misuse = `import type { WebhookEvent } from './events'
export function f(e: WebhookEvent) { if (e.type === 'link.deleted') return e.data.click.id; return '' }`
    const bad = tsc({ 'events.ts': eventTypes('ts'), 'bad.ts': misuse })
    expect(bad.code).not.toBe(0)
    expect(bad.output).toContain("Property 'click' does not exist")
  }, 30_000)

  test('composites, records, enums, optionals and Numeric map to TypeScript', () => {
    const out = eventTypes('ts', SYNTHETIC)
    expect(out).toContain('kind: "a" | "b"')
    expect(out).toContain('counts: Record<string, number>')
    expect(out).toContain('extra?: string | null')
    expect(out).toContain('note?: string')
    expect(out).toContain('matrix: Array<number[]>')
    expect(out).toContain('"x-odd key": boolean')
    expect(out).toContain('anything: unknown')
    expect(out).toContain('size: number')
    expect(tsc({ 'events.ts': out }).code).toBe(0)
    expect(
      tsType({
        allOf: [
          { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
          { type: 'object', properties: { b: { type: 'number' } } },
        ],
      }),
    ).toBe('({\n  a: string\n}) & ({\n  b?: number\n})')
  }, 30_000)
})

describe('eventTypes("go")', () => {
  const out = eventTypes('go')

  test('is plausible Go: package, balanced braces, every field tagged', () => {
    expect(out).toStartWith('// Code generated by lnk from the event catalogue. DO NOT EDIT.\n\npackage lnkevents\n')
    expect(out.split('{').length).toBe(out.split('}').length)
    const inStruct = out.split('\n').filter((l) => /^\t[A-Z]\w*\s/.test(l))
    expect(inStruct.length).toBeGreaterThan(50)
    for (const line of inStruct) expect(line).toMatch(/^\t[A-Z]\w* +[\w*.[\]]+ +`json:"[^"]+"`$/)
    for (const e of EVENT_CATALOGUE) expect(out).toContain(`// Always "${e.type}"`)
    expect(out).toBe(eventTypes('go'))
  })

  test('nullable as pointers, arrays as slices, records as maps, Numeric as int64', () => {
    expect(out).toMatch(/\tReferrer +\*string +`json:"referrer"`/)
    expect(out).toMatch(/\tTags +\[\]string +`json:"tags"`/)
    expect(out).toMatch(/\tMetadata +map\[string\]any +`json:"metadata"`/)
    expect(out).toMatch(/\tValue +\*float64 +`json:"value"`/)
    expect(out).toMatch(/\tClickLimit +\*int64 +`json:"clickLimit"`/)
    expect(out).toMatch(/\tRedirectStatus +int64 +`json:"redirectStatus"`/)
    expect(out).toMatch(/\tClick +LinkClickedEventDataClick +`json:"click"`/)
    const synthetic = eventTypes('go', SYNTHETIC)
    expect(synthetic).toMatch(/\tNote +\*string +`json:"note,omitempty"`/)
    expect(synthetic).toMatch(/\tCounts +map\[string\]float64 +`json:"counts"`/)
    expect(synthetic).toMatch(/\tMatrix +\[\]\[\]int64 +`json:"matrix"`/)
    expect(synthetic).toMatch(/\tXOddKey +bool +`json:"x-odd key"`/)
    expect(synthetic).toMatch(/\tAnything +any +`json:"anything"`/)
  })

  test('compiles with go when it is installed', () => {
    const go = Bun.which('go')
    if (!go) {
      console.info('type-gen: `go` is not on PATH; compiling the Go output is skipped (plausibility checks above still ran)')
      return
    }
    const dir = tempDir('lnk-typegen-go-')
    dirs.push(dir)
    writeFileSync(join(dir, 'go.mod'), 'module example.test/lnkevents\n\ngo 1.21\n')
    writeFileSync(join(dir, 'events.go'), out)
    const run = Bun.spawnSync([go, 'vet', './...'], { cwd: dir, stdout: 'pipe', stderr: 'pipe', env: { ...process.env, GOFLAGS: '-mod=mod' } })
    expect(run.stderr.toString()).toBe('')
    expect(run.exitCode).toBe(0)
  })
})
