// Custom domains in the console, in a real browser against a real server whose DNS lookups go to a loopback
// DNS server the test controls: the list (empty and filled), adding a domain, the records to create with
// what was seen, "Verify now" and its result, a refusal shown in words, and delete with confirmation. A
// read-only key sees the domains but no add, verify or delete.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startDnsServer, type DnsServer } from '../domains/_dns'
import { call, DESKTOP, PHONE, startConsoleServer, withConsole, type ConsolePage, type ConsoleServer } from './_console'

let server: ConsoleServer
let dns: DnsServer
beforeAll(async () => {
  dns = await startDnsServer()
  server = await startConsoleServer({ LNK_DNS_SERVERS: dns.address })
})
afterAll(async () => {
  await server.stop()
  await dns.close()
})

const mainText = (page: ConsolePage) => page.evaluate<string>(`document.querySelector('main').innerText`)
const buttons = `[...document.querySelectorAll('main button')].filter((b) => b.getBoundingClientRect().width > 0).map((b) => b.textContent.trim())`

describe('domains', () => {
  test('the empty list at phone width', async () => {
    await withConsole(server, PHONE, async (page) => {
      await page.signIn(server.api.key)
      await page.open('/domains')
      await page.see('No custom domains yet')
      await page.checkScreen('domains-empty')
    })
  }, 60_000)

  test('add a domain, see its records, verify it once its TXT record exists, be throttled, and delete it', async () => {
    const name = 'go.console-test.example'
    await withConsole(server, DESKTOP, async (page) => {
      await page.signIn(server.api.key)
      await page.open('/domains')
      await page.see('No custom domains yet')
      await page.checkScreen('domains-empty')

      // A refusal is said next to the field.
      await page.fill('Domain', 'https://not a domain/')
      await page.press('Add domain')
      await page.waitFor(`document.querySelector('.field.invalid .field-error') !== null`)
      expect(await call(server, 'GET', '/domains')).toEqual([])
      await page.checkScreen('domains-add-error')

      await page.fill('Domain', name)
      await page.press('Add domain')
      await page.waitFor(`/^#\\/domains\\/dom_/.test(location.hash)`)
      const id = (await page.evaluate<string>('location.hash')).replace('#/domains/', '')
      const added = await call(server, 'GET', `/domains/${id}`)
      expect(added.domain).toBe(name)
      const txt = added.records.find((r: any) => r.type === 'TXT')
      await page.see(txt.name)
      await page.see(txt.value)
      await page.see('Not looked yet')
      await page.checkScreen('domains-detail')

      // The TXT record now exists at the "DNS provider": Verify now shows what the API says.
      dns.set(txt.name, 'TXT', [txt.value])
      await page.press('Verify now')
      await page.waitFor(`document.querySelector('main').innerText.includes('Matches')`)
      const checked = await call(server, 'GET', `/domains/${id}`)
      expect(checked.verificationStatus).toBe('verified')
      expect(checked.records.find((r: any) => r.type === 'TXT')).toMatchObject({ seen: [txt.value], ok: true })
      const shown = await mainText(page)
      expect(shown).toContain('Verified')
      expect(shown).not.toContain('Not looked yet')
      expect(dns.queries.some((q) => q.name === txt.name && q.type === 'TXT')).toBe(true)

      // A second check within 10 seconds is refused by the server; the console says so beside the button.
      await page.press('Verify now')
      await page.waitFor(`document.querySelector('main [role=alert]') !== null`)
      expect(await page.evaluate<string>(`document.querySelector('main [role=alert]').innerText`)).not.toBe('')
      await page.checkScreen('domains-verified')

      await page.open('/domains')
      await page.see(name)
      await page.checkScreen('domains-list')

      await page.open(`/domains/${id}`)
      await page.press('Delete domain')
      await page.check('Also archive its links')
      await page.press('Delete')
      await page.waitFor(`location.hash === '#/domains'`)
      await page.see('No custom domains yet')
      expect(await call(server, 'GET', '/domains')).toEqual([])
    })
  }, 60_000)

  test('phone and dark mode; a read-only key sees no add, verify or delete', async () => {
    const added = await call(server, 'POST', '/domains', { domain: 'links.console-test.example' })
    const reader = await call(server, 'POST', '/api-keys', { name: 'domains reader', permissions: ['domains:read'] })
    await withConsole(server, PHONE, async (page) => {
      await page.signIn(server.api.key)
      await page.open('/domains')
      await page.see('links.console-test.example')
      await page.checkScreen('domains-list')
      await page.open(`/domains/${added.id}`)
      await page.see('_lnk-challenge.links.console-test.example')
      await page.checkScreen('domains-detail')
      await page.colorScheme('dark')
      await page.checkScreen('domains-detail-dark')
    })
    await withConsole(server, DESKTOP, async (page) => {
      await page.signIn(reader.key)
      await page.open('/domains')
      await page.see('links.console-test.example')
      expect(await page.evaluate<number>(`document.querySelectorAll('main input').length`)).toBe(0)
      await page.open(`/domains/${added.id}`)
      await page.see('_lnk-challenge.links.console-test.example')
      const shown = await page.evaluate<string[]>(buttons)
      expect(shown.filter((b) => /Verify|Delete/.test(b))).toEqual([])
    })
  }, 60_000)
})
