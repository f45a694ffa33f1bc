// Signing in and out of the console in a real browser: a wrong key is explained and not kept, a good key is
// checked with GET /v1/me and kept in sessionStorage only, the header shows the workspace and key and signs
// out in one click, and a key revoked meanwhile signs the tab out on the next call.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { call, DESKTOP, PHONE, startConsoleServer, withConsole, type ConsoleServer } from './_console'

let server: ConsoleServer
beforeAll(async () => {
  server = await startConsoleServer()
})
afterAll(() => server.stop())

describe('sign-in', () => {
  for (const size of [PHONE, DESKTOP]) {
    test(`a wrong key is refused in words, a good one signs in and out (${size.width} px)`, async () => {
      await withConsole(server, size, async (page) => {
        await page.open()
        await page.see('Sign in to lnk')
        await page.checkScreen('sign-in')
        await page.fill('API key', 'lnk_live_notarealkeynotarealkeynotareal1')
        await page.press('Sign in')
        await page.waitFor(`document.querySelector('#api-key-error') !== null`)
        expect(await page.evaluate<string | null>(`sessionStorage.getItem('lnk.console.key')`)).toBeNull()
        await page.checkScreen('sign-in-error')

        await page.signIn(server.api.key)
        expect(await page.evaluate<string | null>(`sessionStorage.getItem('lnk.console.key')`)).toBe(server.api.key)
        expect(await page.evaluate<number>(`localStorage.length`)).toBe(0)
        const me = await call(server, 'GET', '/me')
        await page.see(me.workspace.name)
        await page.see(me.apiKey.keyPrefix)

        await page.press('Sign out')
        await page.see('Sign in to lnk')
        expect(await page.evaluate<string | null>(`sessionStorage.getItem('lnk.console.key')`)).toBeNull()
      })
    })
  }

  // The start page is chosen a frame after the first signed-in render; an address chosen in between (here
  // the instant the navigation appears, before that frame) is where the tab must stay.
  test('a route chosen as the console opens is kept, not sent to the start page', async () => {
    await withConsole(server, DESKTOP, async (page) => {
      await page.open()
      await page.fill('API key', server.api.key)
      await page.evaluate(`new MutationObserver((_, observer) => {
        if (!document.querySelector('nav.main-nav')) return
        observer.disconnect()
        location.hash = '#/keys'
      }).observe(document.body, { childList: true, subtree: true })`)
      await page.press('Sign in')
      await page.waitFor(`location.hash === '#/keys' && document.querySelector('main h1')?.textContent === 'API keys'`, 4_000)
      // Long enough for the start page's effect to have run, had it been going to.
      await page.evaluate(`new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 200))))`)
      expect(await page.evaluate<string>('location.hash')).toBe('#/keys')
    })
  })

  test('a reload keeps the tab signed in; a key revoked meanwhile signs it out', async () => {
    const made = await call(server, 'POST', '/api-keys', { name: 'console revoke test', permissions: ['*'] })
    await withConsole(server, DESKTOP, async (page) => {
      await page.signIn(made.key)
      await page.open()
      await page.waitFor(`document.querySelector('nav.main-nav') !== null`)
      await call(server, 'POST', `/api-keys/${made.id}/revoke`)
      await page.open()
      await page.see('Sign in to lnk')
      expect(await page.evaluate<string | null>(`sessionStorage.getItem('lnk.console.key')`)).toBeNull()
    })
  })
})
