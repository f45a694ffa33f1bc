// Each module declares the events it publishes (Module.events) and the runtime registers them with the outbox;
// the list subscribers choose from (webhooks' EVENT_CATALOGUE) must be exactly those, in the published order.
import { afterAll, expect, test } from 'bun:test'
import { isRegisteredEvent } from '../../src/events/catalogue'
import type { Module } from '../../src/modules/module'
import { EVENT_CATALOGUE } from '../../src/modules/webhooks/model'
import { setup, type TestEnv } from '../helpers'

let env: TestEnv | undefined
afterAll(async () => {
  await env?.cleanup()
})

test('the events the modules declare are the catalogue, each declared by one module', async () => {
  env = await setup()
  const declared = (Object.values(env.rt.modules) as Module[]).flatMap((m) => (m.events ?? []).map((def) => ({ module: m.name, def })))
  // Same definitions (the same schema objects), each type once.
  expect(new Set(declared.map((d) => d.def)).size).toBe(declared.length)
  expect(new Set(declared.map((d) => d.def))).toEqual(new Set(EVENT_CATALOGUE))
  const owners = {
    'link.created': 'links',
    'link.updated': 'links',
    'link.deleted': 'links',
    'link.clicked': 'links',
    'tag.created': 'tags',
    'tag.updated': 'tags',
    'tag.deleted': 'tags',
    'folder.created': 'folders',
    'folder.updated': 'folders',
    'folder.deleted': 'folders',
    'conversion.created': 'conversions',
    'domain.created': 'domains',
    'domain.verified': 'domains',
    'domain.misconfigured': 'domains',
    'domain.deleted': 'domains',
    'bridge_page.created': 'pages',
    'bridge_page.updated': 'pages',
    'bridge_page.deleted': 'pages',
    'webhook.test': 'webhooks',
  }
  expect(Object.fromEntries(declared.map((d) => [d.def.type, d.module]))).toEqual(owners)
  // The published order (GET /webhooks/types, the OpenAPI enum of event types): links, tags, folders, conversions, domains, pages, webhooks.
  expect(EVENT_CATALOGUE.map((e) => e.type)).toEqual(Object.keys(owners))
  for (const def of EVENT_CATALOGUE) expect(isRegisteredEvent(def.type)).toBe(true)
  expect(isRegisteredEvent('link.exploded')).toBe(false)
})
