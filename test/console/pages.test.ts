// Bridge pages in the console, in a real browser against a real server: the list (empty and filled), the
// templates gallery with its filters, creating a page from a template, and the block editor (append, edit,
// delete) whose preview frame shows the public page after each change (issue 19, end-to-end step 7). A
// read-only key sees the pages but none of the controls that change them.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { call, DESKTOP, PHONE, startConsoleServer, withConsole, type ConsolePage, type ConsoleServer } from './_console'

let server: ConsoleServer
beforeAll(async () => {
  server = await startConsoleServer()
})
afterAll(() => server.stop())

const frameText = `document.querySelector('iframe.preview')?.contentDocument?.body?.innerText ?? ''`
const frameTitled = (title: string) => `document.querySelector('iframe.preview')?.contentDocument?.title === ${JSON.stringify(title)}`
const frameShows = (text: string) => `(${frameText}).includes(${JSON.stringify(text)})`
const blockTexts = async (pageId: string) => ((await call(server, 'GET', `/bridge-pages/${pageId}/blocks`)) as any[]).map((b) => JSON.stringify(b.fields))

async function editorOf(page: ConsolePage): Promise<string> {
  await page.waitFor(`/^#\\/pages\\/bp_/.test(location.hash)`, 10_000)
  return (await page.evaluate<string>('location.hash')).replace('#/pages/', '')
}

describe('bridge pages', () => {
  test('an empty list and the gallery, at phone width', async () => {
    await withConsole(server, PHONE, async (page) => {
      await page.signIn(server.api.key)
      await page.open('/pages')
      await page.see('No bridge pages yet')
      await page.checkScreen('pages-empty')
      await page.press('New page from a template')
      await page.see('Link in bio')
      await page.checkScreen('pages-templates')
    })
  }, 60_000)

  test('create a page from a template, add, edit and delete a block, and see each change in the preview', async () => {
    const unique = `Heading ${crypto.randomUUID().slice(0, 8)}`
    const changed = `${unique} changed`
    await withConsole(server, DESKTOP, async (page) => {
      await page.signIn(server.api.key)
      await page.open('/pages/templates')
      await page.see('Business card')
      await page.checkScreen('pages-templates')

      // The filters are the API's: category, then words.
      await page.select('Category', 'business')
      await page.waitFor(`!document.body.innerText.includes('Link in bio')`)
      await page.see('Business card')
      await page.select('Category', '')
      await page.fill('Search templates', 'concert')
      await page.press('Search')
      await page.waitFor(`!document.body.innerText.includes('Link in bio') && document.body.innerText.includes('Event')`)
      expect(await page.evaluate<string>('location.hash')).toContain('q=concert')
      await page.fill('Search templates', '')
      await page.press('Search')
      await page.see('Link in bio')

      await page.press('Use template Link in bio')
      await page.fill('Title', 'Console e2e page')
      await page.fill('Slug', 'console-e2e')
      await page.press('Create page')
      const id = await editorOf(page)
      const made = await call(server, 'GET', `/bridge-pages/${id}`)
      expect({ title: made.title, slug: made.slug, templateSlug: made.templateSlug }).toEqual({
        title: 'Console e2e page',
        slug: 'console-e2e',
        templateSlug: 'link-in-bio',
      })
      await page.waitFor(frameShows('Your name'))
      const before = made.blockCount as number

      // Append a heading: it shows in the frame (the public page, same origin here) and through the API.
      await page.press('Add a block')
      await page.select('Block type', 'heading')
      await page.fill('Text', unique)
      await page.select('Level', '3')
      await page.press('Add block')
      await page.waitFor(frameShows(unique))
      expect(await page.evaluate<string>(`document.querySelector('iframe.preview').contentDocument.querySelector('h3')?.textContent ?? ''`)).toBe(unique)
      const blocks = await call(server, 'GET', `/bridge-pages/${id}/blocks`)
      expect(blocks).toHaveLength(before + 1)
      expect(blocks.at(-1)).toMatchObject({ type: 'heading', fields: { text: unique, level: 3 } })
      await page.checkScreen('pages-editor')

      // Edit it (PATCH), then delete it (confirmed).
      await page.press(`Edit block ${before + 1} (Heading)`)
      await page.fill('Text', changed)
      await page.press('Save block')
      await page.waitFor(frameShows(changed))
      expect((await blockTexts(id)).some((t) => t.includes(changed))).toBe(true)

      await page.press(`Delete block ${before + 1}`)
      await page.press('Delete block')
      await page.waitFor(`!(${frameShows(unique)}) && (${frameShows('Your name')})`)
      expect((await blockTexts(id)).some((t) => t.includes(unique))).toBe(false)

      // A refused block says why next to the form, and changes nothing.
      await page.press('Add a block')
      await page.select('Block type', 'button')
      await page.fill('URL', 'javascript:alert(1)')
      await page.press('Add block')
      await page.waitFor(`document.querySelector('[role=alert]') !== null`)
      expect(await call(server, 'GET', `/bridge-pages/${id}/blocks`)).toHaveLength(before)

      await page.open('/pages')
      await page.see('Console e2e page')
      await page.see('/p/console-e2e')
      await page.checkScreen('pages-list')
    })
  }, 60_000)

  test('phone and dark mode: the filled list and the editor; a read-only key sees no controls that change pages', async () => {
    const made = await call(server, 'POST', '/bridge-pages', { title: 'Read-only view', templateSlug: 'event' })
    const readOnly = await call(server, 'POST', '/api-keys', { name: 'pages reader', permissions: ['pages:read'] })
    await withConsole(server, PHONE, async (page) => {
      await page.signIn(server.api.key)
      await page.open('/pages')
      await page.see('Read-only view')
      await page.checkScreen('pages-list')
      await page.open(`/pages/${made.id}`)
      await page.waitFor(frameTitled('Read-only view'))
      await page.checkScreen('pages-editor')
      await page.colorScheme('dark')
      await page.open(`/pages/${made.id}`)
      await page.waitFor(frameTitled('Read-only view'))
      await page.checkScreen('pages-editor-dark')
      await page.open('/pages/templates')
      await page.see('Link in bio')
      await page.checkScreen('pages-templates-dark')
    })
    await withConsole(server, DESKTOP, async (page) => {
      await page.signIn(readOnly.key)
      await page.open(`/pages/${made.id}`)
      await page.waitFor(frameTitled('Read-only view'))
      await page.see('Blocks')
      const controls = `[...document.querySelectorAll('main button')].filter((b) => b.getBoundingClientRect().width > 0).map((b) => b.textContent.trim())`
      expect(await page.evaluate<string[]>(controls)).toEqual([])
      await page.open('/pages/templates')
      await page.see('Link in bio')
      expect(await page.evaluate<string[]>(controls)).toEqual(['Search'])
      await page.open('/pages')
      await page.see('Browse templates')
    })
  }, 60_000)
})
