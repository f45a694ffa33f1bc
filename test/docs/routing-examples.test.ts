// docs/routing.md cannot lie: every example in it is run against the API. A fenced block `json create:NAME`
// is a create body sent to POST /v1/links; each `json resolve:NAME` is `{visit, answer}`, the visit sent to
// POST /v1/links/{id}/resolve of that link and the answer's fields expected in the reply (a destination that
// is one of the link's rules' must also name that rule); `json split:NAME` resolves `visitors` distinct
// visitors, the first 50 twice, and expects every share within 10 points of the weight shown.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { body, bootstrapAccount, ROOT, setup, type TestEnv } from '../helpers'

interface Example {
  create: Record<string, any>
  resolves: { visit: Record<string, unknown>; answer: Record<string, unknown> }[]
  split: { visitors: number; shares: Record<string, number> } | null
}

/** The examples of the page, by name, in the order they appear. */
function examples(markdown: string): Map<string, Example> {
  const found = new Map<string, Example>()
  const of = (name: string) => {
    let e = found.get(name)
    if (!e) found.set(name, (e = { create: {}, resolves: [], split: null }))
    return e
  }
  for (const m of markdown.matchAll(/^```json (create|resolve|split):([a-z-]+)\n([\s\S]*?)^```$/gm)) {
    const [, kind, name, text] = m
    const json = JSON.parse(text!)
    if (kind === 'create') of(name!).create = json
    else if (kind === 'resolve') of(name!).resolves.push(json)
    else of(name!).split = json
  }
  return found
}

const page = readFileSync(join(ROOT, 'docs/routing.md'), 'utf8')
const all = examples(page)

let env: TestEnv
let key: string
beforeAll(async () => {
  env = await setup()
  key = (await bootstrapAccount(env.rt)).apiKey.key
})
afterAll(() => env.cleanup())

async function call(path: string, json: unknown) {
  const res = await env.request(path, { method: 'POST', key, json })
  return { status: res.status, payload: await body(res) }
}

describe('docs/routing.md', () => {
  test('has the examples the page promises, each with something to check', () => {
    expect([...all.keys()]).toEqual(['stores', 'german', 'split', 'launch', 'office'])
    for (const [name, e] of all) {
      expect({ name, create: Object.keys(e.create).length > 0 }).toEqual({ name, create: true })
      expect({ name, checks: e.resolves.length + (e.split ? 1 : 0) > 0 }).toEqual({ name, checks: true })
    }
  })

  for (const [name, e] of all) {
    test(`example ${name}: created through the API, each visit resolved as shown`, async () => {
      const created = await call('/v1/links', e.create)
      expect({ status: created.status, error: created.payload.error }).toEqual({ status: 201, error: undefined })
      const link = created.payload.data
      // The link holds the rules and variants as sent, each with an id.
      const strip = (items: { id: string }[] | null) => items?.map(({ id, ...rest }) => (expect(id).toMatch(/^(rr|var)_/), rest)) ?? null
      if (e.create.routingRules) expect(strip(link.routingRules)).toEqual(e.create.routingRules.map((r: object) => ({ match: 'all', ...r })))
      if (e.create.variants) expect(strip(link.variants)).toEqual(e.create.variants)
      for (const { visit, answer } of e.resolves) {
        const r = await call(`/v1/links/${link.id}/resolve`, visit)
        expect({ visit, status: r.status }).toEqual({ visit, status: 200 })
        expect(r.payload.data).toMatchObject(answer)
        const base = (url: string) => url.split('?')[0]
        const rule = (link.routingRules ?? []).find((x: { destinationUrl: string }) => base(x.destinationUrl) === base(r.payload.data.destinationUrl))
        expect(r.payload.data.ruleId).toBe(rule ? rule.id : null)
      }
      if (e.split) {
        const counts = new Map<string, number>()
        for (let i = 0; i < e.split.visitors; i++) {
          const visit = { ip: `198.18.${i >> 8}.${i & 255}`, userAgent: `Mozilla/5.0 (X11; Linux x86_64) Firefox/${100 + (i % 25)}.0` }
          const first = (await call(`/v1/links/${link.id}/resolve`, visit)).payload.data
          // Asked again, the first 50 get the same variant (all of them would: the key's rate limit is 600 a minute).
          if (i < 50) expect((await call(`/v1/links/${link.id}/resolve`, visit)).payload.data.variantId).toBe(first.variantId)
          expect(first.variantId).toMatch(/^var_/)
          counts.set(first.destinationUrl, (counts.get(first.destinationUrl) ?? 0) + 1)
        }
        expect([...counts.keys()].sort()).toEqual(Object.keys(e.split.shares).sort())
        for (const [url, weight] of Object.entries(e.split.shares)) {
          expect(Math.abs((100 * counts.get(url)!) / e.split.visitors - weight)).toBeLessThanOrEqual(10)
        }
      }
    })
  }
})
