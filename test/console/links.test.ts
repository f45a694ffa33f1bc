// The console's links screens in a real browser against a real lnk: create a link with a password and a UTM
// campaign through the form, find it by search, download its QR code (PNG decoded to the short URL, SVG and
// PDF by their bytes), edit with a partial PATCH, a server validation error next to its field, delete with
// confirmation, bulk create with a bad row, a read-only key without edit controls, and every screen checked
// at phone and desktop widths (and once in dark mode).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import jsQR from 'jsqr'
import { PNG } from 'pngjs'
import { call, DESKTOP, PHONE, startConsoleServer, withConsole, type ConsolePage, type ConsoleServer } from './_console'

let server: ConsoleServer
let downloads: string
beforeAll(async () => {
  server = await startConsoleServer()
  downloads = mkdtempSync(join(tmpdir(), 'lnk-console-downloads-'))
})
afterAll(async () => {
  await server.stop()
  rmSync(downloads, { recursive: true, force: true })
})

const js = (value: unknown) => JSON.stringify(value)

/** Reloads the tab, as a person pressing F5 would, and waits for the console to be back. */
async function reload(page: ConsolePage) {
  await page.evaluate('window.__beforeReload = true')
  await page.send('Page.reload')
  await page.waitFor(`window.__beforeReload === undefined && document.querySelector('main h1') !== null`)
}

/** The route part of the page's address (after '#'). */
const hash = (page: ConsolePage) => page.evaluate<string>('location.hash')

/** Waits for a file whose name ends with `suffix` to finish downloading into `dir`; answers its bytes. */
async function downloaded(page: ConsolePage, dir: string, suffix: string): Promise<Buffer> {
  for (let i = 0; i < 100; i++) {
    const done = readdirSync(dir).find((f) => f.endsWith(suffix))
    if (done) return readFileSync(join(dir, done))
    await Bun.sleep(100)
  }
  throw new Error(
    `no ${suffix} arrived in ${dir}: ${readdirSync(dir).join(', ')}; page says ${await page.evaluate<string>('document.body.innerText.slice(0, 500)')}`,
  )
}

/** The error text shown next to the field labelled `label`, or null. */
const errorOf = (page: ConsolePage, label: string) =>
  page.evaluate<string | null>(`(() => {
    const l = [...document.querySelectorAll('label')].find((l) => l.textContent.trim() === ${js(label)})
    const input = l && document.getElementById(l.htmlFor)
    if (!input || input.getAttribute('aria-invalid') !== 'true') return null
    const ids = (input.getAttribute('aria-describedby') ?? '').split(' ')
    return ids.map((id) => document.getElementById(id)).filter((el) => el && el.classList.contains('field-error')).map((el) => el.textContent).join(' ') || null
  })()`)

/** Records the JSON bodies the page sends with PATCH, to see what an edit sends. */
const recordPatches = (page: ConsolePage) =>
  page.evaluate(`(() => {
    window.__patches = []
    const original = window.fetch
    window.fetch = (url, init) => {
      if (init && init.method === 'PATCH') window.__patches.push(JSON.parse(init.body))
      return original(url, init)
    }
  })()`)

describe('links screens', () => {
  test('create a link with a password and a UTM campaign, find it by search, download its QR code', async () => {
    await withConsole(server, DESKTOP, async (page) => {
      await page.signIn(server.api.key)
      await page.open('/links')
      await page.see('No links yet.')
      await page.press('New link')
      await page.see('New link')
      await page.fill('Destination URL', 'https://shop.example/spring?ref=mail')
      await page.fill('Slug', 'spring-sale')
      await page.fill('Title', 'Spring sale')
      await page.fill('Password', 'open sesame')
      await page.fill('UTM campaign', 'spring')
      await page.fill('UTM source', 'newsletter')
      await page.see('https://shop.example/spring?ref=mail&utm_source=newsletter&utm_campaign=spring')
      await page.fill('Preview title', 'Flowers for less')
      await page.see('Flowers for less')
      await page.checkScreen('link-new-filled')
      await page.press('Create link')
      await page.waitFor(`document.querySelector('h1')?.textContent === 'Link spring-sale'`)

      const [made] = (await call(server, 'GET', '/links?search=spring-sale')) as any[]
      expect(made).toMatchObject({
        slug: 'spring-sale',
        hasPassword: true,
        utmCampaign: 'spring',
        utmSource: 'newsletter',
        title: 'Spring sale',
        ogTitle: 'Flowers for less',
      })
      expect(made.password).toBeUndefined()
      expect(await hash(page)).toBe(`#/links/${made.id}`)

      // Others so that search has something to leave out.
      await call(server, 'POST', '/links', { destinationUrl: 'https://other.example/', slug: 'autumn', tags: ['season'] })
      await page.open('/links')
      await page.see('autumn')
      await page.fill('Search', 'spring')
      await page.press('Apply filters')
      await page.waitFor(`location.hash.includes('search=spring') && !document.body.innerText.includes('/autumn')`)
      await page.see(made.shortUrl.replace(/^https?:\/\//, ''))
      // The filter lives in the address: a reload keeps it.
      await reload(page)
      await page.see(made.shortUrl.replace(/^https?:\/\//, ''))
      expect(await page.evaluate<string>(`document.querySelector('input[type=search]').value`)).toBe('spring')
      expect(await page.evaluate<boolean>(`document.body.innerText.includes('/autumn')`)).toBe(false)
      await page.press('Edit')
      await page.waitFor(`document.querySelector('img.qr-preview')?.complete === true && document.querySelector('img.qr-preview').naturalWidth > 0`)

      await page.send('Page.setDownloadBehavior', { behavior: 'allow', downloadPath: downloads })
      await page.select('QR size (pixels or points)', '256')
      await page.press('Download PNG')
      const png = PNG.sync.read(await downloaded(page, downloads, '.png'))
      expect([png.width, png.height]).toEqual([256, 256])
      const code = jsQR(new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length), png.width, png.height)
      expect(code?.data).toBe(made.shortUrl)

      await page.press('Download SVG')
      const svg = (await downloaded(page, downloads, '.svg')).toString('utf8')
      expect(svg).toStartWith('<svg')
      expect(svg).toContain('width="256"')
      await page.press('Download PDF')
      const pdf = await downloaded(page, downloads, '.pdf')
      expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-')
      expect(readdirSync(downloads).sort()).toEqual(['spring-sale-qr-256.pdf', 'spring-sale-qr-256.png', 'spring-sale-qr-256.svg'])
    })
  }, 60_000)

  test('edit sends only the changed field; a server validation error shows next to its field; delete asks first', async () => {
    const link = await call(server, 'POST', '/links', { destinationUrl: 'https://edit.example/', slug: 'to-edit', tags: ['a'], clickLimit: 5 })
    await withConsole(server, PHONE, async (page) => {
      await page.signIn(server.api.key)
      await page.open(`/links/${link.id}`)
      await page.see('Save changes')
      await recordPatches(page)
      await page.fill('Title', 'Edited title')
      await page.press('Save changes')
      await page.see('Saved.')
      expect(await page.evaluate<unknown[]>('window.__patches')).toEqual([{ title: 'Edited title' }])
      expect(await call(server, 'GET', `/links/${link.id}`)).toMatchObject({ title: 'Edited title', clickLimit: 5, tags: ['a'] })

      // Clearing a field sends null.
      await page.fill('Click limit', '')
      await page.press('Save changes')
      await page.waitFor(`window.__patches.length === 2`)
      expect(await page.evaluate<unknown>('window.__patches[1]')).toEqual({ clickLimit: null })
      await page.waitFor(`document.body.innerText.includes('Saved.')`)
      expect((await call(server, 'GET', `/links/${link.id}`)).clickLimit).toBeNull()

      // The slug "v1" is reserved: only the server knows, and its message lands by the Slug field.
      await page.fill('Slug', 'v1')
      await page.fill('Fallback URL', 'not a url')
      await page.press('Save changes')
      await page.waitFor(`document.querySelector('[aria-invalid=true]') !== null`)
      expect(await errorOf(page, 'Slug')).toContain('reserved')
      expect(await errorOf(page, 'Fallback URL')).toContain('absolute URL')
      expect(await errorOf(page, 'Title')).toBeNull()
      await page.see('Some fields need a change')
      await page.checkScreen('link-edit-error')
      expect((await call(server, 'GET', `/links/${link.id}`)).slug).toBe('to-edit')

      await page.press('Delete link')
      await page.waitFor(`document.querySelector('dialog[open]') !== null`)
      await page.checkScreen('link-delete-confirm')
      await page.press('Cancel')
      await page.waitFor(`document.querySelector('dialog[open]') === null`)
      expect((await call(server, 'GET', `/links/${link.id}`)).id).toBe(link.id)
      await page.press('Delete link')
      await page.press('Delete')
      await page.waitFor(`location.hash === '#/links'`)
      const res = await server.lnk.env.request(`/v1/links/${link.id}`, { key: server.api.key })
      expect(res.status).toBe(404)
    })
  }, 60_000)

  test('bulk create from pasted CSV and from a file: the bad row is shown, the others are created', async () => {
    await withConsole(server, PHONE, async (page) => {
      await page.signIn(server.api.key)
      await page.open('/links/bulk')
      await page.see('Links, one per line')
      await page.checkScreen('links-bulk')
      await page.fill(
        'Links, one per line',
        [
          'destinationUrl,slug,title,tags',
          'https://a.example/,bulk-a,First,x;y',
          'not a url,bulk-bad,Broken,',
          '"https://c.example/?q=1,2",bulk-c,Third,',
        ].join('\n'),
      )
      await page.press('Create 3 links')
      await page.waitFor(`(() => { const p = document.querySelector('progress'); return p && p.value === 3 && p.max === 3 })()`)
      await page.see('2 created, 1 failed')
      await page.see('Failed')
      expect(await page.evaluate<string>(`document.querySelector('tr.failed').innerText`)).toContain('destinationUrl')
      await page.checkScreen('links-bulk-result')
      expect(await call(server, 'GET', '/links?search=bulk-a')).toMatchObject([{ slug: 'bulk-a', title: 'First', tags: ['x', 'y'] }])
      expect(await call(server, 'GET', '/links?search=bulk-c')).toMatchObject([{ destinationUrl: 'https://c.example/?q=1,2' }])
      expect(await call(server, 'GET', '/links?search=bulk-bad')).toEqual([])

      // A CSV file is read in the browser and replaces the text.
      const file = join(downloads, 'links.csv')
      writeFileSync(file, 'https://file.example/one,bulk-file-1\nhttps://file.example/two\n')
      const { root } = await page.send('DOM.getDocument')
      const { nodeId } = await page.send('DOM.querySelector', { nodeId: root.nodeId, selector: 'input[type=file]' })
      await page.send('DOM.setFileInputFiles', { nodeId, files: [file] })
      await page.waitFor(`document.querySelector('textarea').value.includes('file.example/two')`)
      await page.press('Create 2 links')
      await page.see('2 of 2 rows sent: 2 created, 0 failed')
      expect(await call(server, 'GET', '/links?search=bulk-file-1')).toMatchObject([{ destinationUrl: 'https://file.example/one' }])
    })
  }, 60_000)

  test('a read-only key sees the links but no create, edit or delete controls', async () => {
    const link = await call(server, 'POST', '/links', { destinationUrl: 'https://read.example/', slug: 'read-only' })
    const made = await call(server, 'POST', '/api-keys', { name: 'console links reader', permissions: ['links:read'] })
    await withConsole(server, DESKTOP, async (page) => {
      await page.signIn(made.key)
      await page.open('/links')
      await page.see('read-only')
      expect(await page.evaluate<boolean>(`document.body.innerText.includes('New link') || document.body.innerText.includes('Bulk create')`)).toBe(false)
      await page.press('Details')
      await page.see('Settings (read only)')
      await page.waitFor(`document.querySelector('img.qr-preview') !== null`)
      const controls = await page.evaluate<string[]>(`[...document.querySelectorAll('button')].map((b) => b.textContent.trim())`)
      expect(controls).not.toContain('Save changes')
      expect(controls).not.toContain('Delete link')
      expect(controls).toContain('Download PNG')
      expect(await page.evaluate<boolean>(`document.querySelector('fieldset.bare').disabled`)).toBe(true)
      await page.checkScreen('link-read-only')
      expect((await call(server, 'GET', `/links/${link.id}`)).slug).toBe('read-only')
    })
  }, 60_000)

  for (const size of [PHONE, DESKTOP]) {
    test(`every links screen passes the screen checks (${size.width} px${size === PHONE ? ', dark' : ''})`, async () => {
      const link = await call(server, 'POST', '/links', {
        destinationUrl: 'https://shots.example/a/very/long/path/that/has/to/wrap/on/a/phone?with=query&and=more',
        slug: `shots-${size.width}`,
        title: 'Screenshot link',
        tags: ['shots', 'demo'],
        ogTitle: 'A card title',
        ogDescription: 'A card description',
        ogImageUrl: 'https://img.example/card.png',
      })
      await withConsole(server, size, async (page) => {
        if (size === PHONE) await page.colorScheme('dark')
        await page.signIn(server.api.key)
        await page.open('/links')
        await page.see(`shots-${size.width}`)
        await page.checkScreen('links')
        await page.open('/links?search=nothing-matches-this')
        await page.see('No link matches these filters.')
        await page.checkScreen('links-empty')
        await page.open('/links/new')
        await page.see('Create link')
        await page.checkScreen('link-new')
        await page.open('/links/bulk')
        await page.see('Links, one per line')
        await page.checkScreen('links-bulk')
        await page.open(`/links/${link.id}`)
        await page.see('Save changes')
        await page.waitFor(`document.querySelector('img.qr-preview') !== null`)
        await page.waitFor(`document.querySelector('[aria-label="Image from img.example"]') !== null`)
        await page.checkScreen('link-edit')
        await page.open('/links/lnk_missing')
        await page.see('not found')
        await page.checkScreen('link-missing')
      })
    }, 60_000)
  }
})
