// The link form's routing editors in a real browser against a real lnk (issue 36): a link made through the UI
// with two rules and a three-way split (the shares shown as the weights change), rules reordered and removed
// with the keyboard-reachable buttons (ids kept), the server's validation issues shown beside the exact input
// their path names, a read-only key offered no control that changes them, and "try a visit" showing a rule
// match, a variant and the trace — each state checked with axe, at phone and desktop widths.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { countryChoices } from '../../web/console/src/screens/links/countries'
import { fromZonedInput, toZonedInput } from '../../web/console/src/screens/links/zones'
import { call, DESKTOP, PHONE, startConsoleServer, withConsole, type ConsolePage, type ConsoleServer } from './_console'

let server: ConsoleServer
beforeAll(async () => {
  server = await startConsoleServer()
})
afterAll(async () => {
  await server.stop()
})

const js = (value: unknown) => JSON.stringify(value)

/** The element labelled `label` (exact text of its <label>), as an expression. */
const labelled = (label: string) => `(() => {
  const l = [...document.querySelectorAll('label')].find((l) => l.textContent.trim() === ${js(label)})
  return l && document.getElementById(l.htmlFor)
})()`

/** Picks exactly `values` in the multiple select labelled `label`. */
async function choose(page: ConsolePage, label: string, values: string[]) {
  const ok = await page.evaluate<boolean>(`(() => {
    const el = ${labelled(label)}
    if (!el || !el.multiple) return false
    for (const o of el.options) o.selected = ${js(values)}.includes(o.value)
    el.dispatchEvent(new Event('change', { bubbles: true }))
    return true
  })()`)
  if (!ok) throw new Error(`no multiple select labelled "${label}"`)
}

/** The error text tied (aria-describedby) to the input labelled `label`, or null when it is not marked invalid. */
const errorOf = (page: ConsolePage, label: string) =>
  page.evaluate<string | null>(`(() => {
    const input = ${labelled(label)}
    if (!input || input.getAttribute('aria-invalid') !== 'true') return null
    const ids = (input.getAttribute('aria-describedby') ?? '').split(' ')
    return ids.map((id) => document.getElementById(id)).filter((el) => el && el.classList.contains('field-error')).map((el) => el.textContent).join(' ') || null
  })()`)

const legends = (page: ConsolePage) => page.evaluate<string[]>(`[...document.querySelectorAll('fieldset.rule > legend')].map((l) => l.textContent.trim())`)
const sharesShown = (page: ConsolePage) => page.evaluate<string[]>(`[...document.querySelectorAll('output.share')].map((o) => o.textContent.trim())`)
const invalidCount = (page: ConsolePage) => page.evaluate<number>(`document.querySelectorAll('[aria-invalid=true]').length`)

/** Fills the visit's form fields of the "try a visit" panel and waits for the server's answer to show. */
async function tryVisit(page: ConsolePage, fill: () => Promise<void>) {
  await fill()
  // The panel drops its last answer as soon as it asks again.
  await page.press('Try it')
  await page.waitFor(`document.querySelector('.try-result') !== null`)
  return page.evaluate<string>(`document.querySelector('.try-result').innerText`)
}

describe("the editors' pure parts", () => {
  test('a time condition reads its wall-clock time in the chosen zone, across clock changes, and back', () => {
    expect(fromZonedInput('2026-01-01T09:00', 'Europe/Paris')).toBe('2026-01-01T08:00:00.000Z')
    expect(fromZonedInput('2026-07-01T09:00', 'Europe/Paris')).toBe('2026-07-01T07:00:00.000Z')
    expect(fromZonedInput('2026-03-29T03:30', 'Europe/Paris')).toBe('2026-03-29T01:30:00.000Z')
    expect(fromZonedInput('2026-01-01T09:00', 'Asia/Kolkata')).toBe('2026-01-01T03:30:00.000Z')
    expect(fromZonedInput('2026-01-01T09:00:15', 'UTC')).toBe('2026-01-01T09:00:15.000Z')
    expect(toZonedInput('2026-07-01T07:00:00Z', 'Europe/Paris')).toBe('2026-07-01T09:00')
    expect(toZonedInput('2026-01-01T03:30:20Z', 'Asia/Kolkata')).toBe('2026-01-01T09:00:20')
    // What does not read goes as typed, for the server to name.
    expect(fromZonedInput('next tuesday', 'UTC')).toBe('next tuesday')
  })

  test('countries are offered by their names, by ISO code, without withdrawn or grouping codes', () => {
    const countries = countryChoices()
    const codes = new Set(countries.map((c) => c.value))
    expect(countries.find((c) => c.value === 'BR')?.label).toBe('Brazil')
    expect(countries.find((c) => c.value === 'DE')?.label).toBe('Germany')
    for (const gone of ['EU', 'UN', 'SU', 'YU', 'ZZ', 'UK']) expect(codes.has(gone)).toBe(false)
    for (const code of codes) expect(code).toMatch(/^[A-Z]{2}$/)
    expect(codes.size).toBeGreaterThanOrEqual(249)
    expect(countries.map((c) => c.label)).toEqual(countries.map((c) => c.label).sort((a, b) => a.localeCompare(b, 'en')))
  })
})

describe('routing editors', () => {
  let linkId = ''

  test('create a link with two rules and a three-way split through the form; the shares follow the weights', async () => {
    await withConsole(server, DESKTOP, async (page) => {
      await page.signIn(server.api.key)
      await page.open('/links/new')
      await page.fill('Destination URL', 'https://default.example/')
      await page.fill('Slug', 'routed')

      await page.press('Add rule')
      await page.fill('Name (rule 1)', 'Brazil')
      await page.select('Field (rule 1, condition 1)', 'country')
      await page.select('Operator (rule 1, condition 1)', 'eq')
      // Countries are offered by name; the value sent is the ISO code.
      await page.select('Value (rule 1, condition 1)', 'Brazil')
      await page.fill('Then send to (rule 1)', 'https://br.example/')

      await page.press('Add rule')
      await page.fill('Name (rule 2)', 'Phones in the EU')
      await page.select('Send when (rule 2)', 'all')
      await page.select('Field (rule 2, condition 1)', 'os')
      await page.select('Operator (rule 2, condition 1)', 'in')
      await choose(page, 'Values (rule 2, condition 1)', ['ios', 'android'])
      await page.press('Add condition to rule 2')
      await page.select('Field (rule 2, condition 2)', 'continent')
      await page.select('Operator (rule 2, condition 2)', 'eq')
      await page.select('Value (rule 2, condition 2)', 'Europe')
      await page.press('Add condition to rule 2')
      await page.select('Field (rule 2, condition 3)', 'time')
      await page.select('Operator (rule 2, condition 3)', 'gte')
      await page.fill('Date and time (rule 2, condition 3)', '2026-01-01T09:00')
      await page.select('Time zone (rule 2, condition 3)', 'Europe/Paris')
      await page.fill('Then send to (rule 2)', 'https://phones.example/')

      // The first press makes the two a split needs; the second a third.
      await page.press('Add variant')
      await page.press('Add variant')
      await page.fill('Variant 1 URL', 'https://a.example/')
      await page.fill('Variant 2 URL', 'https://b.example/')
      await page.fill('Variant 3 URL', 'https://c.example/')
      await page.fill('Weight (variant 1)', '50')
      await page.fill('Weight (variant 2)', '30')
      await page.fill('Weight (variant 3)', '20')
      expect(await sharesShown(page)).toEqual(['50%', '30%', '20%'])
      await page.fill('Weight (variant 3)', '70')
      expect(await sharesShown(page)).toEqual(['33.3%', '20%', '46.7%'])
      await page.fill('Weight (variant 3)', '')
      expect(await sharesShown(page)).toEqual(['62.5%', '37.5%', '–'])
      await page.fill('Weight (variant 3)', '20')
      expect(await sharesShown(page)).toEqual(['50%', '30%', '20%'])
      await page.checkScreen('routing-new-filled')

      await page.press('Create link')
      await page.waitFor(`document.querySelector('h1')?.textContent === 'Link routed'`)
      const [made] = (await call(server, 'GET', '/links?search=routed')) as any[]
      linkId = made.id
      expect(made.routingRules).toHaveLength(2)
      expect(made.routingRules[0]).toMatchObject({
        name: 'Brazil',
        match: 'all',
        conditions: [{ field: 'country', op: 'eq', value: 'BR' }],
        destinationUrl: 'https://br.example/',
      })
      expect(made.routingRules[1]).toMatchObject({
        name: 'Phones in the EU',
        match: 'all',
        conditions: [
          { field: 'os', op: 'in', value: ['ios', 'android'] },
          { field: 'continent', op: 'eq', value: 'EU' },
          { field: 'time', op: 'gte' },
        ],
        destinationUrl: 'https://phones.example/',
      })
      // 09:00 in Paris in winter is 08:00 UTC.
      expect(Date.parse(made.routingRules[1].conditions[2].value)).toBe(Date.parse('2026-01-01T08:00:00Z'))
      for (const rule of made.routingRules) expect(rule.id).toMatch(/^rr_/)
      expect(made.variants.map((v: any) => [v.destinationUrl, v.weight])).toEqual([
        ['https://a.example/', 50],
        ['https://b.example/', 30],
        ['https://c.example/', 20],
      ])
      for (const variant of made.variants) expect(variant.id).toMatch(/^var_/)

      // The saved link reads back into the same editors: the zone is the viewer's, the instant the same.
      await page.see('Try a visit')
      expect(await legends(page)).toEqual(['Rule 1: Brazil', 'Rule 2: Phones in the EU'])
      expect(await sharesShown(page)).toEqual(['50%', '30%', '20%'])
      await page.checkScreen('routing-edit')
    })
  }, 90_000)

  test('reorder and remove rules and a variant with the buttons; ids are kept across the save', async () => {
    const before = await call(server, 'GET', `/links/${linkId}`)
    await withConsole(server, PHONE, async (page) => {
      await page.colorScheme('dark')
      await page.signIn(server.api.key)
      await page.open(`/links/${linkId}`)
      await page.see('Try a visit')
      await page.press('Move down rule 1')
      expect(await legends(page)).toEqual(['Rule 1: Phones in the EU', 'Rule 2: Brazil'])
      // The moved rule is now last: focus stays with it, on the button that can still move it.
      await page.waitFor(`document.activeElement?.textContent === 'Move up rule 2'`)
      await page.checkScreen('routing-reordered')
      await page.press('Save changes')
      await page.see('Saved.')
      const reordered = await call(server, 'GET', `/links/${linkId}`)
      expect(reordered.routingRules.map((r: any) => r.id)).toEqual([before.routingRules[1].id, before.routingRules[0].id])
      expect(reordered.routingRules[0]).toEqual(before.routingRules[1])
      expect(reordered.variants).toEqual(before.variants)

      await page.press('Remove rule 1')
      expect(await legends(page)).toEqual(['Rule 1: Brazil'])
      await page.waitFor(`document.activeElement?.id === 'add-rule'`)
      await page.press('Remove variant 3')
      expect(await sharesShown(page)).toEqual(['62.5%', '37.5%'])
      await page.checkScreen('routing-removed')
      await page.press('Save changes')
      await page.waitFor(`document.body.innerText.includes('Saved.') && document.querySelectorAll('output.share').length === 2`)
      const after = await call(server, 'GET', `/links/${linkId}`)
      expect(after.routingRules).toEqual([before.routingRules[0]])
      expect(after.variants).toEqual(before.variants.slice(0, 2))
    })
  }, 90_000)

  test("the server's validation issues show beside the input their path names", async () => {
    await withConsole(server, DESKTOP, async (page) => {
      await page.signIn(server.api.key)
      await page.open(`/links/${linkId}`)
      await page.see('Try a visit')
      await page.press('Add condition to rule 1')
      await page.select('Field (rule 1, condition 2)', 'ip')
      await page.select('Operator (rule 1, condition 2)', 'in')
      await page.fill('Addresses (rule 1, condition 2)', '192.0.2.0/24\nnot-an-address')
      await page.fill('Weight (variant 2)', '500')
      await page.press('Save changes')
      await page.waitFor(`document.querySelector('[aria-invalid=true]') !== null`)
      expect(await errorOf(page, 'Addresses (rule 1, condition 2)')).toBeTruthy()
      expect(await errorOf(page, 'Weight (variant 2)')).toBeTruthy()
      // Nothing else is marked: the issues are where their paths say.
      expect(await errorOf(page, 'Value (rule 1, condition 1)')).toBeNull()
      expect(await errorOf(page, 'Weight (variant 1)')).toBeNull()
      expect(await invalidCount(page)).toBe(2)
      await page.see('Some fields need a change')
      await page.checkScreen('routing-invalid')
      // Rule issues count rows as sent: once a rule is added they go rather than risk pointing at another row; the
      // variants are unchanged, so theirs stays.
      await page.press('Add rule')
      expect(await errorOf(page, 'Addresses (rule 1, condition 2)')).toBeNull()
      expect(await errorOf(page, 'Weight (variant 2)')).toBeTruthy()
      const unchanged = await call(server, 'GET', `/links/${linkId}`)
      expect(unchanged.routingRules[0].conditions).toHaveLength(1)
      expect(unchanged.variants[1].weight).toBe(30)
    })
  }, 90_000)

  test('a read-only key sees the rules and the split but nothing that would change them, and can still try a visit', async () => {
    const reader = await call(server, 'POST', '/api-keys', { name: 'console routing reader', permissions: ['links:read'] })
    await withConsole(server, DESKTOP, async (page) => {
      await page.signIn(reader.key)
      await page.open(`/links/${linkId}`)
      await page.see('Settings (read only)')
      expect(await legends(page)).toEqual(['Rule 1: Brazil'])
      expect(await sharesShown(page)).toEqual(['62.5%', '37.5%'])
      const buttons = await page.evaluate<string[]>(`[...document.querySelectorAll('main button')].map((b) => b.textContent.trim())`)
      expect(buttons.filter((b) => /^(Add|Move|Remove)/.test(b))).toEqual([])
      const answer = await tryVisit(page, () => page.select('Visitor country', 'Brazil'))
      expect(answer).toContain('https://br.example/')
      await page.checkScreen('routing-read-only')
    })
  }, 90_000)

  test('try a visit: a rule match, then a variant with each rule traced', async () => {
    const link = await call(server, 'POST', '/links', {
      destinationUrl: 'https://default.example/',
      slug: 'try-me',
      routingRules: [
        { name: 'Brazil', match: 'all', conditions: [{ field: 'country', op: 'eq', value: 'BR' }], destinationUrl: 'https://br.example/' },
        {
          name: 'iPhones',
          match: 'any',
          conditions: [
            { field: 'os', op: 'eq', value: 'ios' },
            { field: 'query.ref', op: 'eq', value: 'apple' },
          ],
          destinationUrl: 'https://iphone.example/',
        },
      ],
      variants: [
        { destinationUrl: 'https://a.example/', weight: 50 },
        { destinationUrl: 'https://b.example/', weight: 30 },
        { destinationUrl: 'https://c.example/', weight: 20 },
      ],
    })
    await withConsole(server, PHONE, async (page) => {
      await page.signIn(server.api.key)
      await page.open(`/links/${link.id}`)
      await page.see('Try a visit')

      const brazil = await tryVisit(page, () => page.select('Visitor country', 'Brazil'))
      expect(brazil).toContain('Redirected')
      expect(brazil).toContain('https://br.example/')
      expect(brazil).toContain(`Rule 1 (Brazil) matched (${link.routingRules[0].id})`)
      expect(brazil).toContain('No variant')
      await page.checkScreen('routing-try-rule')

      const iphone = await tryVisit(page, async () => {
        await page.select('Visitor country', '')
        await page.press('iPhone')
      })
      expect(iphone).toContain(`Rule 2 (iPhones) matched (${link.routingRules[1].id})`)
      expect(iphone).toContain('https://iphone.example/')
      expect(iphone).toContain('operating system is iOS: holds')
      expect(iphone).toContain('Rule 1 (Brazil): did not match')
      expect(iphone).toContain('country is Brazil: does not hold')

      const desktop = await tryVisit(page, async () => {
        await page.press('Desktop Chrome')
        await page.fill('IP address', '198.51.100.23')
        await page.fill('Query', 'ref=mail')
      })
      expect(desktop).toContain('No rule matched')
      expect(desktop).toContain('did not match')
      // The variant the panel shows is the one the server picks for this visitor.
      const userAgent = await page.evaluate<string>(`${labelled('User agent')}.value`)
      expect(userAgent).toContain('Windows NT')
      const direct = await call(server, 'POST', `/links/${link.id}/resolve`, { userAgent, ip: '198.51.100.23', query: { ref: 'mail' } })
      expect(direct.variantId).toMatch(/^var_/)
      const index = link.variants.findIndex((v: any) => v.id === direct.variantId)
      expect(desktop).toContain(`Variant ${index + 1} (${direct.variantId})`)
      expect(desktop).toContain(direct.destinationUrl)
      await page.checkScreen('routing-try-variant')

      // Trying records nothing.
      expect((await call(server, 'GET', `/links/${link.id}`)).totalClicks).toBe(0)
    })
  }, 90_000)
})
