import { describe, expect, test } from 'bun:test'
import { DISCORD, discordBody, SLACK, slackBody, type BatchLike, type EventEnvelopeLike } from '../../../src/modules/webhooks/formats'

const link = {
  id: 'l1',
  slug: 'promo',
  domain: 'go.example',
  shortUrl: 'https://go.example/promo',
  destinationUrl: 'https://shop.example/spring',
  title: 'Spring sale',
  tags: ['sale'],
}
const ev = (type: string, data: Record<string, unknown>, mode: 'live' | 'test' = 'live'): EventEnvelopeLike => ({
  id: 'evt_1',
  type,
  timestamp: '2026-03-01T12:00:00.000Z',
  mode,
  data,
})

const huge = 'A'.repeat(50_000)
const hostile = `<!channel> @everyone @here <https://evil.example|click> & ${huge}`
const oversized = ev('link.clicked', {
  click: { id: 'clk_1', unique: true, referrer: hostile, userAgent: hostile },
  link: { ...link, shortUrl: hostile, destinationUrl: hostile },
})

interface SlackBlock {
  type: string
  text?: { text: string }
  fields?: { text: string }[]
  elements?: { text: string }[]
}

function assertSlackLimits(body: { text: string; blocks: unknown[] }) {
  expect(body.text.length).toBeGreaterThan(0)
  expect(body.text.length).toBeLessThanOrEqual(SLACK.text)
  expect(body.blocks.length).toBeLessThanOrEqual(SLACK.blocks)
  for (const b of body.blocks as SlackBlock[]) {
    if (b.text) {
      expect(b.text.text.length).toBeGreaterThan(0)
      expect(b.text.text.length).toBeLessThanOrEqual(SLACK.sectionText)
    }
    expect((b.fields ?? []).length).toBeLessThanOrEqual(SLACK.fields)
    for (const f of b.fields ?? []) expect(f.text.length).toBeLessThanOrEqual(SLACK.fieldText)
    for (const e of b.elements ?? []) expect(e.text.length).toBeLessThanOrEqual(SLACK.sectionText)
  }
}

interface DiscordEmbed {
  title?: string
  description?: string
  fields?: { name: string; value: string }[]
  footer?: { text: string }
}

function assertDiscordLimits(body: { content: string; embeds: unknown[]; allowed_mentions: { parse: [] } }) {
  expect(body.allowed_mentions).toEqual({ parse: [] })
  expect(body.content.length).toBeLessThanOrEqual(DISCORD.content)
  expect(body.embeds.length).toBeLessThanOrEqual(DISCORD.embeds)
  let total = 0
  for (const e of body.embeds as DiscordEmbed[]) {
    expect((e.title ?? '').length).toBeLessThanOrEqual(DISCORD.title)
    expect((e.description ?? '').length).toBeLessThanOrEqual(DISCORD.description)
    expect((e.fields ?? []).length).toBeLessThanOrEqual(DISCORD.fields)
    for (const f of e.fields ?? []) {
      expect(f.name.length).toBeGreaterThan(0)
      expect(f.value.length).toBeGreaterThan(0)
      expect(f.name.length).toBeLessThanOrEqual(DISCORD.fieldName)
      expect(f.value.length).toBeLessThanOrEqual(DISCORD.fieldValue)
    }
    total += (e.title ?? '').length + (e.description ?? '').length + (e.footer?.text ?? '').length
    total += (e.fields ?? []).reduce((n, f) => n + f.name.length + f.value.length, 0)
  }
  expect(total).toBeLessThanOrEqual(DISCORD.total)
  expect(JSON.stringify(body)).not.toMatch(/@everyone|@here/)
}

describe('summaries per event type', () => {
  const cases: [EventEnvelopeLike, string][] = [
    [ev('link.created', link), 'Link created: https://go.example/promo'],
    [ev('link.updated', { ...link, changes: ['title', 'tags'] }), 'Link updated: https://go.example/promo'],
    [ev('link.deleted', link), 'Link deleted: https://go.example/promo'],
    [ev('link.clicked', { click: { id: 'clk_1', unique: true, referrer: null, userAgent: 'UA' }, link }), 'Click on https://go.example/promo'],
    [
      ev('conversion.created', {
        conversion: { id: 'cnv_1', clickId: 'clk_1', eventName: 'purchase', value: 19.99, currency: 'EUR', metadata: null },
        link,
        workspaceId: 'ws_1',
      }),
      'Conversion "purchase" on https://go.example/promo',
    ],
    [ev('webhook.test', { endpointId: 'whe_1', message: 'Hello from lnk' }), 'Test event: Hello from lnk'],
    [ev('domain.verified', { domain: 'go.example' }), 'Event domain.verified'],
  ]
  for (const [event, title] of cases) {
    test(event.type, () => {
      const slack = slackBody(event)
      expect(slack.text).toBe(title)
      assertSlackLimits(slack)
      const discord = discordBody(event)
      expect(discord.content).toBe(title)
      expect((discord.embeds[0] as DiscordEmbed).title).toBe(title)
      assertDiscordLimits(discord)
    })
  }

  test('details land in fields', () => {
    const conv = cases[4]![0]
    const fields = (slackBody(conv).blocks[0] as SlackBlock).fields!.map((f) => f.text)
    expect(fields).toContain('*Value*\n19.99 EUR')
    const updated = discordBody(cases[1]![0]).embeds[0] as DiscordEmbed
    expect(updated.fields).toContainEqual({ name: 'Changed', value: 'title, tags', inline: true } as never)
    const clicked = discordBody(cases[3]![0]).embeds[0] as DiscordEmbed
    expect(clicked.fields!.find((f) => f.name === 'Referrer')!.value).toBe('direct')
  })

  test('a click names the destination it was sent to: a rule’s or variant’s, else (older events) the link’s', () => {
    const destinationOf = (click: Record<string, unknown>) => {
      const slack = (slackBody(ev('link.clicked', { click, link })).blocks[0] as SlackBlock).fields!.map((f) => f.text)
      const discord = (discordBody(ev('link.clicked', { click, link })).embeds[0] as DiscordEmbed).fields!.find((f) => f.name === 'Destination')!.value
      expect(slack).toContain(`*Destination*\n${discord}`)
      return discord
    }
    const click = { id: 'clk_2', unique: false, referrer: null, userAgent: 'UA' }
    expect(destinationOf({ ...click, ruleId: 'rr_1', variantId: null, destinationUrl: 'https://shop.example/de' })).toBe('https://shop.example/de')
    expect(destinationOf({ ...click, ruleId: null, variantId: 'var_b', destinationUrl: 'https://shop.example/b' })).toBe('https://shop.example/b')
    expect(destinationOf(click)).toBe('https://shop.example/spring')
  })

  test('test mode is marked', () => {
    expect(slackBody(ev('link.created', link, 'test')).text).toBe('[test] Link created: https://go.example/promo')
  })
})

describe('escaping and mentions', () => {
  const event = ev('link.created', { ...link, title: '<!channel> & <https://evil.example|login> @everyone @here' })
  test('Slack: & < > are escaped everywhere', () => {
    const body = JSON.stringify(slackBody(event))
    expect(body).not.toContain('<!channel>')
    expect(body).not.toContain('<https://evil')
    expect(body).toContain('&lt;!channel&gt; &amp; &lt;https://evil.example|login&gt;')
  })
  test('Discord: no pings, no raw @everyone', () => {
    const body = discordBody(event)
    assertDiscordLimits(body)
    expect(JSON.stringify(body)).toContain('@\u200beveryone @\u200bhere')
  })
})

describe('oversized input stays within the limits', () => {
  test('one huge event', () => {
    assertSlackLimits(slackBody(oversized))
    assertDiscordLimits(discordBody(oversized))
  })

  test('a cut never leaves half an entity or half a surrogate pair', () => {
    const emoji = ev('link.created', { ...link, shortUrl: '😀'.repeat(5000) })
    const slackSection = (slackBody(emoji).blocks[0] as SlackBlock).text!.text
    expect(slackSection.endsWith('…')).toBe(true)
    expect(slackSection.isWellFormed()).toBe(true)
    const entities = ev('link.created', { ...link, shortUrl: '&'.repeat(5000) })
    const section = (slackBody(entities).blocks[0] as SlackBlock).text!.text
    expect(section).toMatch(/^Link created: (&amp;)+…$/)
    const discordEmoji = (discordBody(emoji).embeds[0] as DiscordEmbed).title!
    expect(discordEmoji.endsWith('…')).toBe(true)
    expect(discordEmoji.isWellFormed()).toBe(true)
    expect(discordEmoji.length).toBeGreaterThan(DISCORD.title - 3)
  })

  test('a batch of 300 huge events', () => {
    const batch: BatchLike = { type: 'batch', count: 300, events: Array.from({ length: 300 }, () => oversized) }
    const slack = slackBody(batch)
    assertSlackLimits(slack)
    expect(slack.blocks).toHaveLength(SLACK.blocks)
    expect((slack.blocks.at(-1) as SlackBlock).elements![0]!.text).toBe('…and 252 more')
    const discord = discordBody(batch)
    assertDiscordLimits(discord)
    expect(discord.embeds).toHaveLength(10)
    expect(discord.content).toBe('300 events (showing the first 10)')
  })

  test('a small batch shows every event', () => {
    const batch: BatchLike = { type: 'batch', count: 2, events: [ev('link.created', link), ev('link.deleted', link)] }
    const slack = slackBody(batch)
    expect(slack.text).toBe('2 events\nLink created: https://go.example/promo\nLink deleted: https://go.example/promo')
    expect(slack.blocks).toHaveLength(3)
    expect(discordBody(batch).content).toBe('2 events')
    expect(discordBody(batch).embeds).toHaveLength(2)
  })
})
