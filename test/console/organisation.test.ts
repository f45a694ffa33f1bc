// The console's link organisation in a real browser against a real lnk: tags (counts, create, a bad colour
// refused before sending, rename carried to every link, recolour, delete with confirmation), folders (counts,
// create, rename, delete of a non-empty folder moving or deleting its links), the links list's folder sidebar,
// filters, order and "Load more" by cursor, multi-select with bulk tag, move, archive and delete (a link gone
// meanwhile reported by name while the others change), a read-only key without any of the write controls, and
// every state checked with axe at phone (dark) and desktop widths.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { call, DESKTOP, PHONE, startConsoleServer, withConsole, type ConsolePage, type ConsoleServer } from './_console'

let server: ConsoleServer
beforeAll(async () => {
  server = await startConsoleServer()
})
afterAll(async () => {
  await server.stop()
})

const js = (value: unknown) => JSON.stringify(value)

/** Every link of the workspace matching `query` (one page is enough: the tests make fewer than 100). */
const links = async (query = ''): Promise<any[]> => call(server, 'GET', `/links?perPage=100${query}`)
const tagsNow = async (): Promise<any[]> => call(server, 'GET', '/tags')
const foldersNow = async (): Promise<any[]> => call(server, 'GET', '/folders')

/** The link count shown in the row of the tag or folder named `name`. */
const countOf = (page: ConsolePage, name: string) =>
  page.evaluate<string | null>(`(() => {
    const row = [...document.querySelectorAll('main tbody tr')].find((tr) => [...tr.querySelectorAll('a')].some((a) => a.textContent.trim() === ${js(name)}))
    return row ? row.querySelector('td.num').textContent.trim() : null
  })()`)

/** An expression: the slugs the links table shows, in order. */
const SLUGS = `[...document.querySelectorAll('.links-table tbody tr .short-url a')].map((a) => a.textContent.replace(/^.*\\//, ''))`
const shownSlugs = (page: ConsolePage) => page.evaluate<string[]>(SLUGS)
/** Waits until the table shows exactly these slugs (the new address's answer, not the old list still shown). */
const showing = (page: ConsolePage, slugs: string[]) => page.waitFor(`${SLUGS}.join(' ') === ${js(slugs.join(' '))}`)

/** An expression: whether the table lists a row linking `name` (the toast may name it after it is gone). */
const listed = (name: string) => `[...document.querySelectorAll('main tbody a')].some((a) => a.textContent.trim() === ${js(name)})`

/** Waits for the links list's first load (and any reload) to settle. */
const settled = (page: ConsolePage) => page.waitFor(`!document.querySelector('main .state.loading')`)

describe('tags screen', () => {
  test('counts, create (a bad colour refused), rename on every link, recolour, delete with confirmation', async () => {
    await call(server, 'POST', '/links', { destinationUrl: 'https://t.example/1', slug: 'tag-one', tags: ['spring', 'mail'] })
    await call(server, 'POST', '/links', { destinationUrl: 'https://t.example/2', slug: 'tag-two', tags: ['spring'] })
    await withConsole(server, DESKTOP, async (page) => {
      await page.signIn(server.api.key)
      await page.open('/tags')
      await page.see('spring')
      expect(await countOf(page, 'spring')).toBe('2')
      expect(await countOf(page, 'mail')).toBe('1')

      await page.fill('Tag name', 'autumn')
      await page.fill('Colour', 'orange')
      await page.press('Create tag')
      await page.see('is not a colour')
      expect((await tagsNow()).map((t) => t.name)).not.toContain('autumn')
      await page.fill('Colour', '#D2691E')
      await page.press('Create tag')
      await page.waitFor(`[...document.querySelectorAll('main tbody a')].some((a) => a.textContent.trim() === 'autumn')`)
      expect((await tagsNow()).find((t) => t.name === 'autumn')).toMatchObject({ color: '#d2691e', linkCount: 0 })
      await page.checkScreen('tags')

      await page.press('Edit spring')
      await page.fill('Rename to', 'springtime')
      await page.fill('New colour', '#228b22')
      await page.checkScreen('tag-edit')
      await page.press('Save tag')
      await page.waitFor(`[...document.querySelectorAll('main tbody a')].some((a) => a.textContent.trim() === 'springtime')`)
      // The focus is back on the row's Edit button, as it was before editing.
      await page.waitFor(`document.activeElement?.getAttribute('aria-label') === 'Edit springtime'`)
      expect((await links('&search=tag-')).map((l) => [l.slug, [...l.tags].sort()]).sort()).toEqual([
        ['tag-one', ['mail', 'springtime']],
        ['tag-two', ['springtime']],
      ])
      expect((await tagsNow()).find((t) => t.name === 'springtime')).toMatchObject({ color: '#228b22', linkCount: 2 })

      // The tag's name leads to its links.
      await page.press('Links tagged springtime')
      await page.waitFor(`location.hash === '#/links?tag=springtime'`)
      await settled(page)
      expect((await shownSlugs(page)).sort()).toEqual(['tag-one', 'tag-two'])

      await page.open('/tags')
      await page.press('Delete mail')
      await page.waitFor(`document.querySelector('dialog[open]') !== null`)
      await page.see('The tag is removed from 1 link.')
      await page.checkScreen('tag-delete-confirm')
      await page.press('Cancel')
      expect((await tagsNow()).map((t) => t.name)).toContain('mail')
      await page.press('Delete mail')
      await page.press('Delete tag')
      await page.waitFor(`![...document.querySelectorAll('main tbody a')].some((a) => a.textContent.trim() === 'mail')`)
      expect((await tagsNow()).map((t) => t.name)).not.toContain('mail')
      expect((await call(server, 'GET', '/links?search=tag-one'))[0].tags).toEqual(['springtime'])
    })
  }, 60_000)
})

describe('folders screen', () => {
  test('counts, create, rename, and a non-empty folder deleted by moving or by deleting its links', async () => {
    const [a, b] = [await call(server, 'POST', '/folders', { name: 'Campaigns' }), await call(server, 'POST', '/folders', { name: 'Archive box' })]
    for (const slug of ['fa-1', 'fa-2']) await call(server, 'POST', '/links', { destinationUrl: `https://f.example/${slug}`, slug, folderId: a.id })
    await call(server, 'POST', '/links', { destinationUrl: 'https://f.example/fb-1', slug: 'fb-1', folderId: b.id })
    await withConsole(server, PHONE, async (page) => {
      await page.colorScheme('dark')
      await page.signIn(server.api.key)
      await page.open('/folders')
      await page.see('Campaigns')
      expect(await countOf(page, 'Campaigns')).toBe('2')
      expect(await countOf(page, 'Archive box')).toBe('1')

      await page.fill('Folder name', 'Press')
      await page.fill('Description', 'Links for journalists')
      await page.press('Create folder')
      await page.waitFor(`document.body.innerText.includes('Links for journalists')`)
      const press = (await foldersNow()).find((f) => f.name === 'Press')
      expect(press).toMatchObject({ description: 'Links for journalists', linkCount: 0 })
      await page.checkScreen('folders')

      await page.press('Edit Archive box')
      await page.fill('Rename to', 'Old things')
      await page.press('Save folder')
      await page.waitFor(listed('Old things'))
      expect((await call(server, 'GET', `/folders/${b.id}`)).name).toBe('Old things')

      // Non-empty: the dialog asks what becomes of the links; moving them to Press empties Campaigns into it.
      await page.press('Delete Campaigns')
      await page.waitFor(`document.querySelector('dialog[open]') !== null`)
      await page.see('It holds 2 links.')
      await page.select('Move the links to', 'Press')
      await page.checkScreen('folder-delete-choice')
      await page.press('Delete folder')
      await page.waitFor(`!${listed('Campaigns')}`)
      expect((await links('&search=fa-')).map((l) => l.folderId)).toEqual([press.id, press.id])
      expect((await foldersNow()).find((f) => f.id === press.id).linkCount).toBe(2)

      // Deleting the links with their folder.
      await page.press('Delete Old things')
      await page.waitFor(`document.querySelector('dialog[open]') !== null`)
      await page.check('Delete the links too')
      await page.press('Delete folder')
      await page.waitFor(`!${listed('Old things')}`)
      expect(await links('&search=fb-1')).toEqual([])
      expect((await foldersNow()).map((f) => f.name).sort()).toEqual(['Press'])
    })
  }, 60_000)
})

describe('links list organisation', () => {
  test('folder sidebar, filters and order in the address, and "Load more" by cursor', async () => {
    const folder = await call(server, 'POST', '/folders', { name: 'Paged' })
    // 30 links in the folder, titled so that the title order is the reverse of the creation order.
    for (let i = 0; i < 30; i++) {
      const n = String(i).padStart(2, '0')
      await call(server, 'POST', '/links', {
        destinationUrl: `https://p.example/${n}`,
        slug: `paged-${n}`,
        title: `Title ${String(99 - i)}`,
        folderId: folder.id,
      })
    }
    const off = await call(server, 'POST', '/links', { destinationUrl: 'https://p.example/off', slug: 'paged-off', folderId: folder.id, tags: ['odd'] })
    await call(server, 'PATCH', `/links/${off.id}`, { isActive: false })
    await withConsole(server, DESKTOP, async (page) => {
      await page.signIn(server.api.key)
      await page.open('/links')
      await settled(page)
      await page.press('Paged, links: 31')
      await page.waitFor(`location.hash === ${js(`#/links?folderId=${folder.id}`)}`)
      await page.see('Links in Paged')
      await page.waitFor(`${SLUGS}.length === 25 && ${SLUGS}.every((s) => s.startsWith('paged-'))`)
      const first = await shownSlugs(page)
      expect(first).toHaveLength(25)
      expect(first.slice(0, 2)).toEqual(['paged-off', 'paged-29'])
      expect(await page.evaluate<string | null>(`document.querySelector('.folder-nav a[aria-current=page]')?.textContent`)).toContain('Paged')
      await page.checkScreen('links-folder')

      await page.press('Load more')
      await page.waitFor(`document.querySelectorAll('.links-table tbody tr').length === 31`)
      const all = await shownSlugs(page)
      expect(new Set(all).size).toBe(31)
      expect(all.at(-1)).toBe('paged-00')
      expect(await page.evaluate<boolean>(`[...document.querySelectorAll('button')].some((b) => b.textContent.trim() === 'Load more')`)).toBe(false)

      // Sorting by title, ascending: "Title 70" (paged-29) first; the order is in the address.
      await page.select('Sort by', 'Title')
      await page.select('Order', 'Ascending')
      await page.press('Apply filters')
      await page.waitFor(`location.hash.includes('sort=title') && location.hash.includes('order=asc')`)
      await page.waitFor(`${SLUGS}.length === 25 && ${SLUGS}.includes('paged-29')`)
      // The untitled link sorts at one end or the other, as the engine puts nulls; the titled ones are in order.
      expect((await shownSlugs(page)).filter((s) => s !== 'paged-off').slice(0, 3)).toEqual(['paged-29', 'paged-28', 'paged-27'])

      // Filters: inactive links of the folder, then a tag.
      await page.select('Active', 'Inactive')
      await page.press('Apply filters')
      await page.waitFor(`location.hash.includes('active=false')`)
      await showing(page, ['paged-off'])
      await page.checkScreen('links-filtered')
      await page.press('Clear filters')
      await page.waitFor(`!location.hash.includes('active=false') && location.hash.includes('folderId=')`)
      // The form follows the address once the list has it.
      await page.waitFor(`${SLUGS}.length === 25`)
      await page.waitFor(
        `(() => { const l = [...document.querySelectorAll('label')].find((l) => l.textContent.trim() === 'Active'); return ` +
          `document.getElementById(l.htmlFor).value === 'all' })()`,
      )
      await page.fill('Tag', 'odd')
      await page.press('Apply filters')
      await page.waitFor(`location.hash.includes('tag=odd')`)
      await showing(page, ['paged-off'])
      await page.open(`/links?folderId=${folder.id}&domain=nowhere.example`)
      await page.see('No link matches these filters.')
    })
  }, 90_000)

  test('multi-select: add a tag, move, archive and delete; a link gone meanwhile is named, the others change', async () => {
    const target = await call(server, 'POST', '/folders', { name: 'Target' })
    const made: any[] = []
    for (const slug of ['sel-a', 'sel-b', 'sel-c'])
      made.push(await call(server, 'POST', '/links', { destinationUrl: `https://s.example/${slug}`, slug, tags: slug === 'sel-a' ? ['keep'] : [] }))
    await withConsole(server, PHONE, async (page) => {
      await page.colorScheme('dark')
      await page.signIn(server.api.key)
      await page.open('/links?search=sel-')
      await page.waitFor(`${SLUGS}.sort().join(' ') === 'sel-a sel-b sel-c'`)
      expect((await shownSlugs(page)).sort()).toEqual(['sel-a', 'sel-b', 'sel-c'])
      await page.check('Select sel-a')
      await page.check('Select sel-b')
      await page.see('2 links selected')
      await page.checkScreen('links-selected')

      await page.fill('Tag to add', 'picked')
      await page.press('Add tag')
      await page.see('Tagged picked: 2 links done.')
      const tagged = Object.fromEntries((await links('&search=sel-')).map((l) => [l.slug, [...l.tags].sort()]))
      expect(tagged).toEqual({ 'sel-a': ['keep', 'picked'], 'sel-b': ['picked'], 'sel-c': [] })

      await page.select('Folder', 'Target')
      await page.press('Move')
      await page.see('Moved to Target: 2 links done.')
      expect((await links(`&folderId=${target.id}`)).map((l) => l.slug).sort()).toEqual(['sel-a', 'sel-b'])

      // sel-b is deleted behind the console's back: archiving names it as failed and archives sel-a.
      await call(server, 'DELETE', `/links/${made[1].id}`)
      await page.press('Archive')
      await page.see('Archived: 1 link done, 1 link failed.')
      await page.see('sel-b')
      await page.checkScreen('links-bulk-outcome')
      expect((await call(server, 'GET', `/links/${made[0].id}`)).isArchived).toBe(true)
      // Both left the list of unarchived links, and with it the selection.
      await page.waitFor(`document.querySelectorAll('.links-table tbody tr').length === 1`)
      expect(await page.evaluate<boolean>(`document.querySelector('.selection-bar') === null`)).toBe(true)
      await page.open('/links?search=sel-c')
      await showing(page, ['sel-c'])
      await page.check('Select sel-c')
      await page.press('Delete selected')
      await page.waitFor(`document.querySelector('dialog[open]') !== null`)
      await page.checkScreen('links-bulk-delete-confirm')
      await page.press('Delete 1 link')
      await page.see('Deleted: 1 link done.')
      expect((await server.lnk.env.request(`/v1/links/${made[2].id}`, { key: server.api.key })).status).toBe(404)
    })
  }, 60_000)

  test('a read-only key sees tags, folders and the list, without any control that changes them', async () => {
    const reader = await call(server, 'POST', '/api-keys', { name: 'organisation reader', permissions: ['links:read'] })
    await withConsole(server, DESKTOP, async (page) => {
      await page.signIn(reader.key)
      for (const [path, heading] of [
        ['/tags', 'Tags'],
        ['/folders', 'Folders'],
        ['/links', 'Links'],
      ]) {
        await page.open(path!)
        await page.see(heading!)
        await settled(page)
        const controls = await page.evaluate<string[]>(
          `[...document.querySelectorAll('main button, main input[type=checkbox]')].map((b) => b.textContent.trim() || b.getAttribute('aria-label'))`,
        )
        for (const write of ['Create tag', 'Create folder', 'Edit', 'Delete', 'Select']) expect(controls.some((c) => c?.startsWith(write))).toBe(false)
        await page.checkScreen(`organisation-read-only${path!.replace(/\//g, '-')}`)
      }
    })
  }, 60_000)
})
