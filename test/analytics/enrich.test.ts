// The click enricher on its own: countries from the embedded IP database (lookups in a local file only;
// nothing is contacted), private and documentation addresses placed nowhere, another .mmdb (a city
// database built here) read instead, bounded caches, and device, browser and OS from real user agents.
import { afterAll, describe, expect, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createEnricher, isUnroutable } from '../../src/modules/analytics/enrich'
import { EMBEDDED_GEOIP_DB, openGeoDb } from '../../src/platform/geoip'
import { tempDir } from '../helpers'
import { buildMmdb } from './_mmdb'

const dir = tempDir('lnk-enrich-')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Real user agents of the devices people use, and of a search crawler. */
const AGENTS = {
  windowsChrome: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  macSafari: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  linuxFirefox: 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
  windowsEdge: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.51',
  iphone: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  android: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  ipad: 'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  androidTablet: 'Mozilla/5.0 (Linux; Android 13; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  smartTv: 'Mozilla/5.0 (SMART-TV; Linux; Tizen 6.0) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/4.0 Chrome/76.0.3809.146 TV Safari/537.36',
  googlebot: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
} as const

describe('country from the embedded database', () => {
  const enricher = createEnricher()

  test('the embedded database is an .mmdb inside the ip-location-db package, and opens', () => {
    expect(EMBEDDED_GEOIP_DB).toMatch(/geo-whois-asn-country\.mmdb$/)
    expect(openGeoDb(EMBEDDED_GEOIP_DB).metadata.ipVersion).toBe(6)
  })

  test('well-known public addresses get their ISO 3166-1 alpha-2 country, IPv4 and IPv6; no city from a country database', () => {
    expect(enricher.place('8.8.8.8')).toEqual({ country: 'US', city: null })
    expect(enricher.place('2001:4860:4860::8888')).toEqual({ country: 'US', city: null })
    // An IPv4-mapped IPv6 address is the IPv4 address.
    expect(enricher.place('::ffff:8.8.8.8')).toEqual({ country: 'US', city: null })
    expect(enricher.place('1.1.1.1').country).toMatch(/^[A-Z]{2}$/)
    expect(enricher.place('2606:4700:4700::1111').country).toMatch(/^[A-Z]{2}$/)
  })

  test('private, loopback, link-local, shared, documentation and malformed addresses have no country', () => {
    const nowhere = [
      '192.0.2.1',
      '198.51.100.7',
      '203.0.113.9',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.254',
      '192.168.1.1',
      '127.0.0.1',
      '169.254.1.1',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      '2001:db8::1',
      '3fff::1',
      'ff02::1',
      '::ffff:10.0.0.1',
      '',
      'unknown',
      '8.8.8',
      '999.1.1.1',
      '2001:::1',
    ]
    for (const ip of nowhere) expect({ ip, place: enricher.place(ip) }).toEqual({ ip, place: { country: null, city: null } })
    expect(isUnroutable('172.15.255.255')).toBe(false)
    expect(isUnroutable('172.32.0.1')).toBe(false)
    expect(isUnroutable('8.8.8.8')).toBe(false)
  })

  test('the database is read at the first lookup of a public address, not before', () => {
    const lazy = createEnricher()
    lazy.place('192.168.0.1')
    expect(lazy.stats().loaded).toBe(false)
    lazy.place('8.8.8.8')
    expect(lazy.stats().loaded).toBe(true)
  })

  test('lookups are cached per address, in a bounded map', () => {
    const small = createEnricher({ cacheSize: 3 })
    for (let i = 0; i < 3; i++) small.place('8.8.8.8')
    expect(small.stats().places).toBe(1)
    for (const ip of ['8.8.4.4', '1.1.1.1', '9.9.9.9', '1.0.0.1', '208.67.222.222']) small.place(ip)
    expect(small.stats().places).toBe(3)
    // Answers stay right after entries were forgotten.
    expect(small.place('8.8.8.8').country).toBe('US')
    for (let i = 0; i < 50; i++) small.agent(`Mozilla/5.0 agent ${i}`)
    expect(small.stats().agents).toBe(3)
  })
})

describe('another database (LNK_GEOIP_DB)', () => {
  const cityDb = join(dir, 'city.mmdb')
  writeFileSync(
    cityDb,
    buildMmdb({
      // GeoIP2 / GeoLite2 City layout.
      '8.8.8.0/24': { country: { iso_code: 'US', names: { en: 'United States' } }, city: { names: { en: 'Mountain View', de: 'Mountain View' } } },
      '81.2.69.142/32': { country: { iso_code: 'GB' }, registered_country: { iso_code: 'GB' }, city: { names: { en: 'London' } } },
      // Only a registered country.
      '5.5.5.0/24': { registered_country: { iso_code: 'FR' } },
      // The flat layout of ip-location-db's city databases, lower case.
      '2a00:1450::/32': { country_code: 'de', city: 'Berlin' },
      // Unknown-country markers and garbage.
      '6.6.6.0/24': { country_code: 'ZZ' },
      '7.7.7.0/24': { country: { iso_code: 'USA' }, city: { names: { fr: 'Paris' } } },
    }),
  )

  test('neighbours share a lookup only where the database answered for a whole /24 (or /48)', () => {
    const e = createEnricher({ geoipPath: cityDb })
    expect(e.place('8.8.8.8')).toEqual({ country: 'US', city: 'Mountain View' })
    expect(e.place('8.8.8.77')).toEqual({ country: 'US', city: 'Mountain View' })
    expect(e.stats().lookups).toBe(1)
    // A /32 entry says nothing about its neighbour: looked up, and not London.
    expect(e.place('81.2.69.142')).toEqual({ country: 'GB', city: 'London' })
    expect(e.place('81.2.69.143')).toEqual({ country: null, city: null })
    expect(e.stats().lookups).toBe(3)
    expect(e.place('2a00:1450:4001:0:0:0:0:1').country).toBe('DE')
    expect(e.place('2a00:1450:4001:0:0:0:0:2').country).toBe('DE')
    expect(e.stats().lookups).toBe(4)
  })

  test('a city-level database yields country and city', () => {
    const e = createEnricher({ geoipPath: cityDb })
    expect(e.place('8.8.8.8')).toEqual({ country: 'US', city: 'Mountain View' })
    expect(e.place('81.2.69.142')).toEqual({ country: 'GB', city: 'London' })
    expect(e.place('5.5.5.5')).toEqual({ country: 'FR', city: null })
    expect(e.place('2a00:1450:4001:80b::200e')).toEqual({ country: 'DE', city: 'Berlin' })
    expect(e.place('6.6.6.6')).toEqual({ country: null, city: null })
    expect(e.place('7.7.7.7')).toEqual({ country: null, city: 'Paris' })
    // Not in this database: nothing, although the embedded one knows it.
    expect(e.place('1.1.1.1')).toEqual({ country: null, city: null })
    // Documentation addresses are never looked up.
    expect(e.place('192.0.2.1')).toEqual({ country: null, city: null })
  })

  test('openGeoDb says what is wrong with a file that is missing, a directory, or not an .mmdb', () => {
    expect(() => openGeoDb(join(dir, 'missing.mmdb'))).toThrow('no such file')
    expect(() => openGeoDb(dir)).toThrow('is a directory')
    const text = join(dir, 'not.mmdb')
    writeFileSync(text, 'hello, this is not a database\n')
    expect(() => openGeoDb(text)).toThrow('is not a MaxMind DB (.mmdb) file')
    const empty = join(dir, 'empty.mmdb')
    writeFileSync(empty, '')
    expect(() => openGeoDb(empty)).toThrow('is not a MaxMind DB (.mmdb) file')
  })

  test('a database that cannot be read at the first lookup gives no country and is reported once; clicks are never refused', () => {
    const errors: string[] = []
    const e = createEnricher({ geoipPath: join(dir, 'vanished.mmdb'), onError: (m) => errors.push(m) })
    expect(e.enrich('8.8.8.8', AGENTS.iphone)).toEqual({ country: null, city: null, device: 'mobile', browser: 'Safari', os: 'iOS' })
    expect(e.place('1.1.1.1')).toEqual({ country: null, city: null })
    expect(errors).toHaveLength(1)
    expect(errors[0]).toContain('vanished.mmdb')
  })
})

describe('device, browser and OS from the user agent', () => {
  const enricher = createEnricher()
  const cases: [keyof typeof AGENTS, { device: string; browser: string | null; os: string | null }][] = [
    ['windowsChrome', { device: 'desktop', browser: 'Chrome', os: 'Windows' }],
    ['macSafari', { device: 'desktop', browser: 'Safari', os: 'macOS' }],
    ['linuxFirefox', { device: 'desktop', browser: 'Firefox', os: 'Linux' }],
    ['windowsEdge', { device: 'desktop', browser: 'Microsoft Edge', os: 'Windows' }],
    ['iphone', { device: 'mobile', browser: 'Safari', os: 'iOS' }],
    ['android', { device: 'mobile', browser: 'Chrome', os: 'Android' }],
    ['ipad', { device: 'tablet', browser: 'Safari', os: 'iOS' }],
    ['androidTablet', { device: 'tablet', browser: 'Chrome', os: 'Android' }],
    ['smartTv', { device: 'tv', browser: 'Samsung Internet for Android', os: 'Tizen' }],
    ['googlebot', { device: 'bot', browser: 'Googlebot', os: null }],
  ]
  test.each(cases)('%s', (name, expected) => {
    expect(enricher.agent(AGENTS[name])).toEqual(expected as never)
  })

  test('bots by isbot are bots whatever the parser says; unknown and empty agents are "other" or bots, never an error', () => {
    expect(enricher.agent('curl/8.5.0')).toEqual({ device: 'bot', browser: null, os: null })
    expect(enricher.agent('facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)').device).toBe('bot')
    expect(enricher.agent('')).toEqual({ device: 'bot', browser: null, os: null })
    expect(enricher.agent(null)).toEqual({ device: 'bot', browser: null, os: null })
    // An agent the parser does not know: no device type; its generic rule names the product as browser.
    expect(enricher.agent('SomeKiosk/3.2 (Custom; like nothing)')).toEqual({ device: 'other', browser: 'SomeKiosk', os: null })
  })

  test('enrich() is place and agent together', () => {
    expect(enricher.enrich('8.8.8.8', AGENTS.android)).toEqual({ country: 'US', city: null, device: 'mobile', browser: 'Chrome', os: 'Android' })
    expect(enricher.enrich('10.0.0.1', AGENTS.windowsChrome)).toEqual({ country: null, city: null, device: 'desktop', browser: 'Chrome', os: 'Windows' })
  })
})
