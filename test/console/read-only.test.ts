// Issue 19, end-to-end step 8: a read-only key, made through the console, signs in to a fresh browser and
// finds no edit control on any area's list, nor on one record's screen of each area; a key holding only
// links:read is told in words why it cannot see webhooks, and its navigation offers the links areas alone
// (links, folders, tags).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { call, DESKTOP, PHONE, startConsoleServer, withConsole, type ConsolePage, type ConsoleServer } from './_console'

let server: ConsoleServer
beforeAll(async () => {
  // Webhook endpoints may point at loopback here, so one can exist without leaving the machine.
  server = await startConsoleServer({ LNK_WEBHOOK_ALLOW_HTTP: 'true', LNK_WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8' })
  // Something on every list, so its filled state (with per-row controls) is what is checked.
  const link = await server.api.make({ slug: 'read-only-check', tags: ['docs'] })
  const domain = await call(server, 'POST', '/domains', { domain: 'go.read-only.test' })
  const webhook = await call(server, 'POST', '/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['link.created'] })
  const templates = await call(server, 'GET', '/templates')
  const page = await call(server, 'POST', '/bridge-pages', { templateSlug: templates[0].slug })
  DETAILS.push(`/links/${link.id}`, `/analytics/links/${link.id}`, `/domains/${domain.id}`, `/pages/${page.id}`, `/webhooks/${webhook.id}`)
})
afterAll(() => server.stop())

const READ = ['links:read', 'analytics:read', 'domains:read', 'webhooks:read', 'api_keys:read', 'pages:read', 'automations:read']

/** Every area's list screen, in the order of the navigation. */
const LISTS = ['/links', '/folders', '/tags', '/analytics', '/domains', '/pages', '/webhooks', '/keys']

/** One record's screen of each area (filled in once the records exist). */
const DETAILS: string[] = []

/** Names of controls that change something: none may be offered to a key without the write permission. */
const FORBIDDEN =
  /^\W*(new|create|add|edit|delete|remove|save|update|pause|resume|rotate|revoke|replay|retry delivery|verify|send test|archive|unarchive|restore|upload|import|bulk|duplicate|append|move|publish|disable|enable)\b/i

/** The names of every button, link, submit input and role=button in the main region that look like edits. */
const editControls = (page: ConsolePage) =>
  page.evaluate<string[]>(`(() => {
    const name = (el) => (el.getAttribute('aria-label') || el.textContent || el.value || '').trim().replace(/\\s+/g, ' ')
    const controls = document.querySelectorAll('main button, main a, main [role=button], main input[type=submit], main input[type=button], main summary')
    return [...controls].map(name).filter((n) => ${FORBIDDEN}.test(n))
  })()`)

describe('read-only keys', () => {
  test('a key with every :read permission and no :write sees no edit control on any list or record', async () => {
    let secret = ''
    await withConsole(server, DESKTOP, async (page) => {
      await page.signIn(server.api.key)
      // The check sees edit controls where they belong: the full key is offered "New key".
      await page.open('/keys')
      expect(await editControls(page)).toContain('New key')
      await page.open('/keys/new')
      await page.fill('Name', 'read only')
      for (const p of READ) await page.check(p)
      await page.press('Create key')
      await page.see('This is shown once')
      secret = (await page.evaluate<string>(`document.querySelector('.secret-value code').textContent`))!
    })
    const made = (await call(server, 'GET', '/api-keys')).find((k: any) => k.name === 'read only')
    expect(made.permissions.sort()).toEqual([...READ].sort())

    const found: Record<string, string[]> = {}
    await withConsole(server, PHONE, async (page) => {
      await page.signIn(secret)
      expect(await page.evaluate<string[]>(`[...document.querySelectorAll('nav.main-nav a')].map((a) => a.textContent.trim())`)).toEqual([
        'Links',
        'Folders',
        'Tags',
        'Analytics',
        'Domains',
        'Bridge pages',
        'Webhooks',
        'API keys',
      ])
      for (const path of [...LISTS, ...DETAILS]) {
        await page.open(path)
        const controls = await editControls(page)
        if (controls.length) found[path] = controls
      }
      // The key's own details: facts only, no actions and no settings form.
      await page.open(`/keys/${made.id}`)
      await page.see('this key')
      const controls = await editControls(page)
      if (controls.length) found[`/keys/${made.id}`] = controls
      expect(await page.evaluate<number>(`document.querySelectorAll('main form, main input, main textarea').length`)).toBe(0)
    })
    expect(found).toEqual({})
  }, 60_000)

  test('a links:read key is told why it cannot see webhooks, and its navigation shows only the links areas', async () => {
    const narrow = await call(server, 'POST', '/api-keys', { name: 'links only', permissions: ['links:read'] })
    await withConsole(server, DESKTOP, async (page) => {
      await page.signIn(narrow.key)
      expect(await page.evaluate<string[]>(`[...document.querySelectorAll('nav.main-nav a')].map((a) => a.textContent.trim())`)).toEqual([
        'Links',
        'Folders',
        'Tags',
      ])
      await page.open('/webhooks')
      await page.waitFor(`document.querySelector('main').innerText.includes('not allowed')`, 10_000).catch(() => {})
      const text = await page.evaluate<string>(`document.querySelector('main').innerText`)
      expect(text).toContain('This API key is not allowed to do that.')
      expect(text).toContain('webhooks:read')
      expect(await editControls(page)).toEqual([])
      await page.checkScreen('read-only-webhooks-forbidden')
    })
  }, 60_000)
})
