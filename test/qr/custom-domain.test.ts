// QR codes of links on a custom domain (issue 34): the Link's qr.png points at the public renderer, which
// renders the short URLs of the verified custom domains this instance serves, and still refuses every other
// host: a domain added but not verified, one nobody added, a served one with a port. The domains are
// verified against the loopback DNS server; every PNG is decoded with a real decoder (jsQR over pngjs).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import jsQR from 'jsqr'
import { PNG } from 'pngjs'
import { body, bootstrapAccount } from '../helpers'
import { domainsEnv, type DomainsEnv } from '../domains/_domains'

const DOMAIN = 'qr.customer.test'
const PENDING = 'pending.customer.test'
const OTHERS = 'qr.someone-else.test'

let env: DomainsEnv

/** Adds, points and verifies `domain` for the key's workspace; throws unless it ends up served. */
async function verifiedDomain(domain: string, key = env.key) {
  const d = await env.add(domain, {}, key)
  env.point(d)
  const checked = (await body(await env.verify(d.id, key))).data
  if (checked.verificationStatus !== 'verified' || !checked.served) throw new Error(`${domain} not served: ${JSON.stringify(checked)}`)
  return d
}

beforeAll(async () => {
  env = await domainsEnv()
  await verifiedDomain(DOMAIN)
  // Added, its records never created: pending, not served.
  await env.add(PENDING)
})
afterAll(() => env?.close())

/** GET without a key, as an <img> would. */
const fetchPublic = (url: string) => env.request(new URL(url).pathname + new URL(url).search)
const renderUrl = (data: string) => `http://localhost:8080/v1/qr/render?data=${encodeURIComponent(data)}`

async function decodePng(res: Response): Promise<string> {
  expect({ status: res.status, type: res.headers.get('content-type') }).toEqual({ status: 200, type: 'image/png' })
  const png = PNG.sync.read(Buffer.from(await res.arrayBuffer()))
  const found = jsQR(new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length), png.width, png.height)
  if (!found) throw new Error(`jsQR found no code in a ${png.width}x${png.height} PNG`)
  return found.data
}

async function expectRefused(res: Response, host: string) {
  expect(res.status).toBe(400)
  const json = await body(res)
  expect({ success: json.success, code: json.error.code, paths: json.error.details.issues.map((i: { path: string }) => i.path) }).toEqual({
    success: false,
    code: 'validation_failed',
    paths: ['data'],
  })
  expect(json.error.message).toContain(host)
  expect(json.error.message).toContain('verified custom domain')
}

describe('/qr/render and custom domains', () => {
  test("a link on a verified custom domain: its qr.png answers a PNG that decodes to the link's short URL", async () => {
    const res = await env.api('/links', { method: 'POST', json: { destinationUrl: 'https://example.com/custom', domain: DOMAIN, include: ['qr'] } })
    expect(res.status).toBe(201)
    const link = (await body(res)).data
    expect(link.shortUrl).toBe(`http://${DOMAIN}/${link.slug}`)
    expect(link.qr.png).toBe(`http://localhost:8080/v1/qr/render?data=${encodeURIComponent(link.shortUrl)}&size=512`)
    expect(await decodePng(await fetchPublic(link.qr.png))).toBe(link.shortUrl)
  })

  test('any URL on a served domain renders exactly as given, whoever owns the domain: the route names no workspace', async () => {
    const other = await bootstrapAccount(env.rt, 'Someone else')
    await verifiedDomain(OTHERS, other.apiKey.key)
    for (const data of [
      `https://${DOMAIN}/abc?utm_source=print`,
      `HTTPS://QR.Customer.TEST/Case`,
      `http://${OTHERS}/theirs`,
      `https://${DOMAIN}:443/default-port`,
    ]) {
      expect(await decodePng(await fetchPublic(renderUrl(data)))).toBe(data)
    }
  })

  test('refused with the 400 envelope: an unverified domain, an unknown one, a served one with a port, a lookalike', async () => {
    const refused: [string, string][] = [
      [`http://${PENDING}/abc`, PENDING],
      ['https://unknown.customer.test/abc', 'unknown.customer.test'],
      [`http://${DOMAIN}:8080/abc`, `${DOMAIN}:8080`],
      [`https://${DOMAIN}.evil.example/abc`, `${DOMAIN}.evil.example`],
      [`https://evil.${DOMAIN}/abc`, `evil.${DOMAIN}`],
    ]
    for (const [data, host] of refused) await expectRefused(await fetchPublic(renderUrl(data)), host)
  })

  test('a domain that stops being served stops rendering', async () => {
    const d = await verifiedDomain('gone.customer.test')
    expect(await decodePng(await fetchPublic(renderUrl('https://gone.customer.test/x')))).toBe('https://gone.customer.test/x')
    expect((await env.api(`/domains/${d.id}`, { method: 'DELETE' })).status).toBe(200)
    await expectRefused(await fetchPublic(renderUrl('https://gone.customer.test/y')), 'gone.customer.test')
  })
})
