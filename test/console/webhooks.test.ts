// The webhooks screens in a real browser against a real lnk that may call loopback receivers: an endpoint
// created through the form to a Bun.serve receiver on 127.0.0.1 (secret shown once), a test ping that arrives
// signed, its delivery with the exact request and response; pause and resume, rotation without grace (the old
// secret stops verifying), the status filter, replay of a failed delivery, replay-all after lnk disabled the
// endpoint; and a read-only key that sees no controls. Every screen is checked at phone and desktop widths.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectRefusedByBoth, LOOPBACK_ENV, receiver, verifyBoth, type Receiver } from '../webhooks/_webhooks'
import { call, DESKTOP, PHONE, startConsoleServer, withConsole, type ConsoleServer, type ConsolePage } from './_console'

let server: ConsoleServer
let rx: Receiver
beforeAll(async () => {
  rx = receiver()
  server = await startConsoleServer(LOOPBACK_ENV)
})
afterAll(async () => {
  await server.stop()
  rx.stop()
})

/** Polls (bounded) until `read` answers something; answers it. */
async function until<T>(what: string, read: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const found = await read()
    if (found !== undefined) return found
    await Bun.sleep(50)
  }
  throw new Error(`gave up waiting for ${what}`)
}

const deliveries = (endpointId: string, query = '') => call(server, 'GET', `/webhooks/${endpointId}/deliveries${query}`) as Promise<any[]>
const shownSecret = (page: ConsolePage) => page.evaluate<string>(`document.querySelector('.secret-value code').textContent`)
/** The deliveries table's text ('' while it is not shown). */
const TABLE = `(document.querySelector('#wh-deliveries')?.parentElement.querySelector('tbody')?.innerText ?? '')`
const mainText = (page: ConsolePage) => page.evaluate<string>(`document.querySelector('main').innerText`)

describe('webhooks console', () => {
  for (const size of [PHONE, DESKTOP]) {
    test(`an endpoint to a loopback receiver: created with its secret shown once, pinged, its delivery read (${size.width} px)`, async () => {
      await withConsole(server, size, async (page) => {
        // A test key sees test endpoints only, and there are none: the empty list.
        await page.signIn(server.api.testKey)
        await page.open('/webhooks')
        await page.see('No webhook endpoints yet')
        await page.checkScreen('webhooks-empty')
        await page.evaluate(`sessionStorage.clear()`)

        await page.signIn(server.api.key)
        await page.open('/webhooks')
        await page.press('New endpoint')
        await page.see('New webhook endpoint')
        await page.see('link.created')
        await page.checkScreen('webhooks-new')

        // The server judges the URL and the form says so next to the field.
        await page.fill('URL', 'ftp://127.0.0.1/hook')
        await page.check('link.*')
        await page.press('Create endpoint')
        await page.waitFor(`[...document.querySelectorAll('.field-error')].some((e) => e.id && e.textContent.includes('url'))`)
        await page.checkScreen('webhooks-new-error')

        const name = `Orders ${size.width}`
        await page.fill('URL', rx.url(`/hook-${size.width}`))
        await page.fill('Name', name)
        await page.fill('Max concurrent requests', '3')
        await page.press('Create endpoint')
        await page.see('Signing secret')
        const secret = await shownSecret(page)
        expect(secret).toMatch(/^whsec_/)
        await page.checkScreen('webhooks-secret')

        const endpoint = (await call(server, 'GET', '/webhooks')).find((e: any) => e.name === name)
        expect(endpoint).toMatchObject({ url: rx.url(`/hook-${size.width}`), events: ['link.*'], format: 'standard', maxConcurrent: 3, isActive: true })

        await page.press('I have saved it')
        await page.see('Test ping')
        expect(await page.evaluate<string>('document.body.innerText')).not.toContain(secret)
        await page.checkScreen('webhook-endpoint')

        const before = rx.received.length
        await page.press('Send test ping')
        await page.see('Delivered: the receiver answered 200')
        expect(rx.received.length).toBe(before + 1)
        const ping = rx.received[before]!
        expect(ping.path).toBe(`/hook-${size.width}`)
        expect(await verifyBoth(ping, secret)).toMatchObject({ type: 'webhook.test', data: { endpointId: endpoint.id } })
        await page.checkScreen('webhook-endpoint-pinged')

        // The ping is in the deliveries list; its page shows what was sent and what came back.
        const [sent] = await deliveries(endpoint.id)
        await page.press('webhook.test')
        await page.see('Delivery: webhook.test')
        await page.see(sent.idempotencyKey)
        await page.see('lnk-webhooks/1.0')
        await page.see('webhook-signature')
        await page.see(`POST ${rx.url(`/hook-${size.width}`)}`)
        await page.see('Status 200')
        const text = await mainText(page)
        expect(text).toContain(`"endpointId": "${endpoint.id}"`)
        expect(text).not.toContain(secret)
        await page.checkScreen('webhook-delivery')

        await page.press('Webhooks')
        await page.waitFor(`document.querySelector('main table') !== null && !document.querySelector('main').innerText.includes('…')`)
        await page.see(name)
        await page.checkScreen('webhooks-list')
      })
    }, 60_000)
  }

  test('pause and resume, rotation without grace, the status filter, a failed delivery replayed, replay-all', async () => {
    const made = await call(server, 'POST', '/webhooks', { url: rx.url('/ops'), name: 'Ops', events: ['link.created'] })
    const id = made.id as string
    rx.answer = () => ({ status: 200 })
    await withConsole(server, DESKTOP, async (page) => {
      await page.signIn(server.api.key)
      await page.open(`/webhooks/${id}`)
      await page.see('Ops')

      await page.press('Pause')
      await page.see('Paused')
      expect((await call(server, 'GET', `/webhooks/${id}`)).isActive).toBe(false)
      await page.press('Resume')
      await page.waitFor(`document.querySelector('main .badge.ok')?.textContent === 'Active'`)
      expect((await call(server, 'GET', `/webhooks/${id}`)).isActive).toBe(true)

      // Settings: a filter rule on the slug and a lower concurrency, saved through the form.
      await page.press('Edit settings')
      await page.check('Only send events that match rules')
      await page.fill('Rule 1 field', 'data.slug')
      await page.select('Rule 1 operator', 'starts_with')
      await page.fill('Rule 1 value', 'wh-')
      await page.fill('Max concurrent requests', '2')
      await page.checkScreen('webhook-edit')
      await page.press('Save changes')
      const saved = await until('the settings saved', async () => {
        const e = await call(server, 'GET', `/webhooks/${id}`)
        return e.maxConcurrent === 2 ? e : undefined
      })
      expect(saved.filters).toEqual({ match: 'all', events: null, rules: [{ field: 'data.slug', op: 'starts_with', value: 'wh-' }] })
      await page.press('Edit settings')

      // Rotation without grace: the new secret is shown once and only it signs.
      await page.check('Keep the old secret signing for 24 hours', false)
      await page.press('Rotate secret')
      await page.press('Rotate')
      await page.see('New signing secret')
      const rotated = await shownSecret(page)
      expect(rotated).toMatch(/^whsec_/)
      expect(rotated).not.toBe(made.secret)
      await page.checkScreen('webhook-rotated')
      expect((await call(server, 'GET', `/webhooks/${id}`)).previousSecretExpiresAt).toBeNull()
      await page.press('I have saved it')
      const before = rx.received.length
      await page.press('Send test ping')
      await page.see('Delivered')
      const ping = rx.received[before]!
      await verifyBoth(ping, rotated)
      await expectRefusedByBoth(ping, made.secret)

      // A receiver failing: the link.created delivery is failed (retrying), found with the filter, replayed.
      rx.answer = () => ({ status: 500, body: 'receiver down' })
      await server.api.make({ slug: 'skipped-by-filter' })
      await server.api.make({ slug: 'wh-failing' })
      const failed = await until('a failed delivery', async () => (await deliveries(id, '?status=failed')).find((d) => d.event === 'link.created'))
      // Events are dispatched in order, so the filtered one was judged already: it made no delivery.
      expect((await deliveries(id)).filter((d) => d.event === 'link.created')).toHaveLength(1)
      await page.select('Status', 'failed')
      await page.waitFor(`${TABLE}.includes('link.created') && !${TABLE}.includes('webhook.test')`)
      expect(await page.evaluate<string>('location.hash')).toContain('status=failed')
      await page.evaluate(`document.querySelector('#wh-deliveries').scrollIntoView()`)
      await page.checkScreen('webhook-deliveries-failed')
      await page.select('Status', 'success')
      await page.waitFor(`${TABLE}.includes('webhook.test') && !${TABLE}.includes('link.created')`)
      await page.select('Status', 'failed')
      await page.press('link.created')
      await page.see('Delivery: link.created')
      await page.see('receiver down')
      await page.checkScreen('webhook-delivery-failed')

      rx.answer = () => ({ status: 200 })
      await page.press('Replay')
      const replay = await until('the replay delivered', async () => (await deliveries(id, '?status=success')).find((d) => d.replayOfId === failed.id))
      await page.see(replay.id)
      await page.press('Refresh')
      await page.see('Delivered')
      expect((await call(server, 'GET', `/webhooks/${id}/deliveries/${failed.id}`)).replayable).toBe(false)

      // A 410 makes lnk disable the endpoint and the delivery dead; resumed, replay-all sends it again.
      rx.answer = () => ({ status: 410 })
      await server.api.make({ slug: 'wh-gone' })
      const dead = await until('a dead delivery', async () => (await deliveries(id, '?status=dead')).find((d) => d.event === 'link.created' && d.replayable))
      rx.answer = () => ({ status: 200 })
      await page.open(`/webhooks/${id}`)
      await page.see('Disabled')
      await page.see('410')
      await page.colorScheme('dark')
      await page.checkScreen('webhook-disabled-dark')
      await page.colorScheme('light')
      await page.press('Resume')
      await until('the endpoint resumed', async () => ((await call(server, 'GET', `/webhooks/${id}`)).isActive ? true : undefined))
      await page.press('Replay all dead')
      await page.see('1 delivery queued again; 0 dead remain.')
      await until('the dead delivery replayed', async () => (await deliveries(id, '?status=success')).find((d) => d.replayOfId === dead.id))
    })
  }, 60_000)

  test('a read-only key sees endpoints and deliveries but no controls', async () => {
    const made = await call(server, 'POST', '/webhooks', { url: rx.url('/read'), name: 'Read me', events: ['*'] })
    const ping = await call(server, 'POST', `/webhooks/${made.id}/test`)
    const reader = await call(server, 'POST', '/api-keys', { name: 'webhooks reader', permissions: ['webhooks:read'] })
    const controls = [
      'New endpoint',
      'Pause',
      'Resume',
      'Send test ping',
      'Rotate secret',
      'Delete endpoint',
      'Replay all dead',
      'Edit settings',
      'Replay',
      'Create endpoint',
    ]
    const shownControls = (page: ConsolePage) =>
      page.evaluate<string[]>(
        `[...document.querySelectorAll('button, a, summary')].map((el) => el.textContent.trim()).filter((t) => ${JSON.stringify(controls)}.includes(t))`,
      )
    for (const size of [PHONE, DESKTOP]) {
      await withConsole(server, size, async (page) => {
        await page.signIn(reader.key)
        await page.open('/webhooks')
        await page.see('Read me')
        expect(await shownControls(page)).toEqual([])
        await page.checkScreen('webhooks-list-read-only')

        await page.press('Read me')
        await page.see('Deliveries')
        await page.see('webhook.test')
        expect(await shownControls(page)).toEqual([])
        await page.checkScreen('webhook-endpoint-read-only')

        await page.press('webhook.test')
        await page.see('Delivery: webhook.test')
        await page.see(ping.idempotencyKey)
        expect(await shownControls(page)).toEqual([])
        await page.checkScreen('webhook-delivery-read-only')

        await page.open('/webhooks/new')
        await page.see('can read webhooks but not create them')
        expect(await shownControls(page)).toEqual([])
        await page.checkScreen('webhooks-new-read-only')

        await page.open('/webhooks/whe_missing')
        await page.waitFor(`document.querySelector('main .state.error') !== null`)
        await page.checkScreen('webhook-endpoint-missing')
      })
    }
  }, 60_000)
})
