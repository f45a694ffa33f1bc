// The API keys screens in a real browser against a real server: a key created with every restriction
// through the form carries each of them (read back through the API), its secret is shown once and works,
// and pause, resume, rotate, edit and revoke do what the API says they do. The console's own key is marked
// and revoking it signs the console out.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { call, DESKTOP, PHONE, startConsoleServer, withConsole, type ConsolePage, type ConsoleServer } from './_console'

let server: ConsoleServer
beforeAll(async () => {
  server = await startConsoleServer()
})
afterAll(() => server.stop())

/** GET /v1/me over the loopback socket (so allowedIps sees 127.0.0.1), answering the status and error code. */
async function me(key: string): Promise<{ status: number; code?: string }> {
  const res = await fetch(`${server.origin}/v1/me`, { headers: { authorization: `Bearer ${key}` } })
  const payload: any = await res.json()
  return { status: res.status, code: payload.error?.code }
}

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']

function berlinToday(): number {
  const short = new Intl.DateTimeFormat('en-US', { timeZone: 'Europe/Berlin', weekday: 'short' }).format(new Date())
  return ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(short)
}

const shownSecret = (page: ConsolePage) => page.evaluate<string | null>(`document.querySelector('.secret-value code')?.textContent ?? null`)

const keyIdFromHash = (page: ConsolePage) => page.evaluate<string>(`decodeURIComponent(location.hash.split('/')[2] ?? '')`)

describe('API keys screens', () => {
  test('create with every restriction, secret once, pause, resume, rotate, edit, revoke (desktop)', async () => {
    await withConsole(server, DESKTOP, async (page) => {
      await page.signIn(server.api.key)
      await page.open('/keys')
      await page.see('this key')
      await page.checkScreen('keys-list')

      await page.press('New key')
      await page.see('New API key')
      await page.checkScreen('keys-new')

      // A refusal by the server lands next to the field it names.
      await page.fill('Name', 'restricted')
      await page.check('links:read')
      await page.fill('Allowed IPs and CIDRs', '127.0.0.1\nnot-an-address')
      await page.press('Create key')
      await page.waitFor(
        `[...document.querySelectorAll('.field-error')].some((e) => e.textContent.includes('not-an-address') && ` +
          `e.closest('.field')?.querySelector('textarea'))`,
      )
      await page.checkScreen('keys-new-error')

      const today = berlinToday()
      const days = [today, (today + 1) % 7, (today + 2) % 7].sort()
      await page.fill('Allowed IPs and CIDRs', '127.0.0.1\n::1\n10.0.0.0/8')
      await page.check('links:write')
      await page.check('analytics:read')
      await page.select('Mode', 'test')
      await page.fill('Domains in scope', 'Go.Example.test')
      await page.fill('Tags in scope', 'team-a\nteam-b')
      await page.check('Only at certain times')
      await page.select('Time zone', 'Europe/Berlin')
      for (let d = 0; d < 7; d++) await page.check(DAYS[d]!, days.includes(d))
      await page.fill('Start time', '00:00')
      await page.fill('End time', '00:00')
      await page.fill('Monthly call cap', '1000')
      await page.fill('Rate limit per minute', '120')
      await page.fill('Expires at', '2031-05-06T07:08')
      const expiresAt = await page.evaluate<string>(`new Date('2031-05-06T07:08').toISOString()`)
      await page.press('Create key')
      await page.see('This is shown once')
      const secret = (await shownSecret(page))!
      expect(secret).toMatch(/^lnk_test_[A-Za-z0-9]{32}$/)
      await page.checkScreen('keys-created')

      const keys = await call(server, 'GET', '/api-keys?mode=all')
      const made = keys.find((k: any) => k.name === 'restricted')
      expect(made).toMatchObject({
        mode: 'test',
        permissions: ['links:read', 'links:write', 'analytics:read'],
        allowedIps: ['127.0.0.1', '::1', '10.0.0.0/8'],
        scopeFilters: { domains: ['go.example.test'], tags: ['team-a', 'team-b'] },
        schedule: { timezone: 'Europe/Berlin', days, startMinute: 0, endMinute: 1440 },
        monthlyCallCap: 1000,
        rateLimitOverride: 120,
        expiresAt,
      })
      expect(await me(secret)).toEqual({ status: 200 })

      // Leaving the screen forgets the secret: it is in no page state and in no storage.
      await page.press('All keys')
      await page.see('restricted')
      await page.evaluate(`history.back()`)
      await page.see('New API key')
      expect(await page.evaluate<boolean>(`document.documentElement.outerHTML.includes(${JSON.stringify(secret)})`)).toBe(false)
      expect(await page.evaluate<string>(`JSON.stringify({ ...sessionStorage, ...localStorage })`)).not.toContain(secret)

      await page.open(`/keys/${made.id}`)
      await page.see('Europe/Berlin')
      await page.see('10.0.0.0/8')
      await page.checkScreen('keys-detail')

      await page.fill('Pause reason (optional)', 'holiday')
      await page.press('Pause')
      await page.see('Resume')
      expect(await me(secret)).toEqual({ status: 403, code: 'key_paused' })
      await page.checkScreen('keys-detail-paused')
      await page.press('Resume')
      await page.see('Pause reason (optional)')
      expect(await me(secret)).toEqual({ status: 200 })

      await page.fill('Grace hours', '2')
      await page.press('Rotate')
      await page.see('The new secret')
      const rotated = (await shownSecret(page))!
      expect(rotated).toMatch(/^lnk_test_/)
      expect(rotated).not.toBe(secret)
      await page.see('keeps working for 2 more hours')
      expect(await me(rotated)).toEqual({ status: 200 })
      expect(await me(secret)).toEqual({ status: 200 })
      expect(await call(server, 'GET', `/api-keys/${made.id}`)).toMatchObject({ rotating: true, graceHoursRemaining: 2 })
      await page.checkScreen('keys-rotated')

      // Editing sends only what changed; clearing a list clears it.
      await page.fill('Name', 'restricted, renamed')
      await page.fill('Tags in scope', '')
      await page.check('Only at certain times', false)
      await page.press('Save changes')
      await page.waitFor(`document.querySelector('h1')?.textContent.includes('renamed')`)
      expect(await call(server, 'GET', `/api-keys/${made.id}`)).toMatchObject({
        name: 'restricted, renamed',
        scopeFilters: { domains: ['go.example.test'] },
        schedule: null,
        monthlyCallCap: 1000,
      })

      // An edit the server refuses shows next to its field.
      await page.fill('Expires at', '2001-01-01T00:00')
      await page.press('Save changes')
      await page.waitFor(`[...document.querySelectorAll('.field-error')].some((e) => e.textContent.includes('future'))`)

      await page.press('Revoke')
      await page.see('This cannot be undone')
      await page.press('Revoke key')
      await page.waitFor(`document.querySelector('.badge.bad')?.textContent === 'revoked'`)
      expect(await me(rotated)).toEqual({ status: 401, code: 'unauthorized' })
      expect(await page.evaluate<number>(`document.querySelectorAll('main button').length`)).toBe(0)
    })
  }, 60_000)

  test('phone and dark mode; the console key is marked and revoking it signs out', async () => {
    const own = await call(server, 'POST', '/api-keys', { name: 'console phone', permissions: ['*'] })
    await withConsole(server, PHONE, async (page) => {
      await page.signIn(own.key)
      await page.open('/keys')
      await page.see('console phone')
      await page.checkScreen('keys-list')
      await page.colorScheme('dark')
      await page.checkScreen('keys-list-dark')
      await page.colorScheme('light')

      await page.press('New key')
      await page.see('New API key')
      await page.check('Only at certain times')
      // The schedule's zone starts as the viewer's own.
      const zone = await page.evaluate<string>(`Intl.DateTimeFormat().resolvedOptions().timeZone`)
      expect(await page.evaluate<string>(`[...document.querySelectorAll('select')].find((s) => s.labels[0]?.textContent === 'Time zone').value`)).toBe(zone)
      await page.checkScreen('keys-new')
      await page.press('Create key')
      await page.see('Give the key a name.')
      await page.see('Choose at least one permission.')
      await page.checkScreen('keys-new-error')
      await page.fill('Name', 'made on a phone')
      await page.check('links:read')
      await page.check('Only at certain times', false)
      await page.press('Create key')
      await page.see('This is shown once')
      await page.checkScreen('keys-created')

      await page.open(`/keys/${own.id}`)
      await page.see('this key')
      await page.checkScreen('keys-detail')
      await page.colorScheme('dark')
      await page.checkScreen('keys-detail-dark')
      await page.colorScheme('light')

      await page.open('/keys/key_does_not_exist')
      await page.waitFor(`document.querySelector('main .state.error') !== null`)
      await page.checkScreen('keys-detail-error')

      await page.open(`/keys/${own.id}`)
      await page.see('this key')
      expect(await keyIdFromHash(page)).toBe(own.id)
      await page.press('Revoke')
      await page.see('the console will sign out')
      await page.press('Revoke key')
      await page.see('Sign in to lnk')
      expect(await page.evaluate<string | null>(`sessionStorage.getItem('lnk.console.key')`)).toBeNull()
      expect(await me(own.key)).toEqual({ status: 401, code: 'unauthorized' })
    })
  }, 60_000)

  test('rotating the console key switches the console to the new secret', async () => {
    const own = await call(server, 'POST', '/api-keys', { name: 'console rotate', permissions: ['*'] })
    await withConsole(server, DESKTOP, async (page) => {
      await page.signIn(own.key)
      await page.open('/keys/key_does_not_exist')
      await page.waitFor(`document.querySelector('main .state.error') !== null`)
      await page.checkScreen('keys-detail-error')
      await page.open(`/keys/${own.id}`)
      await page.see('this key')
      await page.fill('Grace hours', '0')
      await page.press('Rotate')
      await page.see('The new secret')
      const rotated = (await shownSecret(page))!
      expect(await page.evaluate<string | null>(`sessionStorage.getItem('lnk.console.key')`)).toBe(rotated)
      expect(await me(own.key)).toEqual({ status: 401, code: 'unauthorized' })
      await page.press('← All keys')
      await page.see('console rotate')
      expect(await page.evaluate<string>(`document.body.innerText`)).not.toContain('Sign in to lnk')
    })
  }, 60_000)
})
