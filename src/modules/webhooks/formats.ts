// Slack and Discord bodies for endpoints with `format: slack | discord`: a readable summary of each event
// instead of the raw envelope, always inside the receiving service's limits, because either service
// answers 400 to a message over any one limit and the delivery would then fail for good.
//
// Every piece of event data is untrusted text (titles, referrers, user agents, conversion metadata):
// - Slack mrkdwn: & < > are escaped, so nothing can form a <!channel> mention or a disguised <url|link>.
// - Discord: `allowed_mentions: {parse: []}` stops every ping, and `@everyone`/`@here` get a zero-width
//   space after the @ so they do not even render as mentions.
// Texts are cut with an ellipsis, never across a surrogate pair or (Slack) an HTML entity.
import { isoInstant } from './filters'

export interface EventEnvelopeLike {
  id: string
  type: string
  timestamp: string
  mode: 'live' | 'test'
  data: Record<string, unknown>
}

export interface BatchLike {
  type: 'batch'
  count: number
  events: EventEnvelopeLike[]
}

export const SLACK = { text: 40_000, blocks: 50, sectionText: 3000, fields: 10, fieldText: 2000 } as const
export const DISCORD = {
  content: 2000,
  embeds: 10,
  title: 256,
  description: 4096,
  fields: 25,
  fieldName: 256,
  fieldValue: 1024,
  footer: 2048,
  total: 6000,
} as const

interface Summary {
  title: string
  fields: [string, string][]
  context: string
}

const rec = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {})

function text(v: unknown): string {
  if (v === null || v === undefined || v === '') return '—'
  if (typeof v === 'string') return v
  if (typeof v === 'object') return JSON.stringify(v)
  return String(v)
}

/** Cuts to at most `max` UTF-16 units with an ellipsis, never splitting a surrogate pair. */
export function cut(s: string, max: number): string {
  if (s.length <= max) return s
  if (max <= 0) return ''
  let end = max - 1
  const code = s.charCodeAt(end - 1)
  if (code >= 0xd800 && code <= 0xdbff) end--
  return `${s.slice(0, end)}…`
}

function summarise(e: EventEnvelopeLike): Summary {
  const d = rec(e.data)
  const link = rec(e.type === 'link.created' || e.type === 'link.updated' || e.type === 'link.deleted' ? d : d.link)
  const short = text(link.shortUrl)
  const prefix = e.mode === 'test' ? '[test] ' : ''
  const context = `${e.type} · ${e.id} · ${e.timestamp}${e.mode === 'test' ? ' · test mode' : ''}`
  const s = (title: string, fields: [string, unknown][]): Summary => ({
    title: prefix + title,
    fields: fields.map(([k, v]) => [k, text(v)]),
    context,
  })
  switch (e.type) {
    case 'link.created':
      return s(`Link created: ${short}`, [
        ['Destination', link.destinationUrl],
        ['Title', link.title],
        ['Tags', Array.isArray(link.tags) ? link.tags.join(', ') : null],
      ])
    case 'link.updated':
      return s(`Link updated: ${short}`, [
        ['Changed', Array.isArray(d.changes) ? d.changes.join(', ') : null],
        ['Destination', link.destinationUrl],
      ])
    case 'link.deleted':
      return s(`Link deleted: ${short}`, [['Destination', link.destinationUrl]])
    case 'link.clicked': {
      const click = rec(d.click)
      // The destination this visit was sent to (a routing rule's or variant's); events written before routing name the link's.
      return s(`Click on ${short}`, [
        ['Destination', click.destinationUrl ?? link.destinationUrl],
        ['Referrer', click.referrer ?? 'direct'],
        ['Unique visitor', click.unique === true ? 'yes' : 'no'],
        ['User agent', click.userAgent],
      ])
    }
    case 'conversion.created': {
      const c = rec(d.conversion)
      const value = c.value === null || c.value === undefined ? null : `${text(c.value)} ${c.currency ?? ''}`.trim()
      return s(`Conversion "${text(c.eventName)}" on ${short}`, [
        ['Value', value],
        ['Click', c.clickId],
        ['Metadata', c.metadata],
      ])
    }
    case 'webhook.test':
      return s(`Test event: ${text(d.message)}`, [['Endpoint', d.endpointId]])
    default:
      return s(`Event ${e.type}`, Object.entries(d).slice(0, SLACK.fields))
  }
}

const isBatch = (p: EventEnvelopeLike | BatchLike): p is BatchLike => p.type === 'batch' && Array.isArray((p as BatchLike).events)

// ---- Slack ----------------------------------------------------------------------------------------------

export const slackEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** Escapes, then cuts, dropping an entity the cut would leave half-written. */
function slackText(s: string, max: number): string {
  const escaped = slackEscape(s)
  if (escaped.length <= max) return escaped
  return cut(escaped, max).replace(/&[a-z]*…$/, '…')
}

const mrkdwn = (t: string) => ({ type: 'mrkdwn', text: t })

function slackEventBlocks(sum: Summary): unknown[] {
  const fields = sum.fields.slice(0, SLACK.fields).map(([k, v]) => mrkdwn(slackText(`*${k}*\n${v}`, SLACK.fieldText)))
  return [
    { type: 'section', text: mrkdwn(slackText(sum.title, SLACK.sectionText)), ...(fields.length ? { fields } : {}) },
    { type: 'context', elements: [mrkdwn(slackText(sum.context, SLACK.sectionText))] },
  ]
}

function slackBatchLine(sum: Summary): string {
  return `${sum.title}\n${sum.fields.map(([k, v]) => `${k}: ${cut(v, 200)}`).join(' · ')}`
}

export function slackBody(payload: EventEnvelopeLike | BatchLike): { text: string; blocks: unknown[] } {
  if (!isBatch(payload)) {
    const sum = summarise(payload)
    return { text: slackText(sum.title, SLACK.text), blocks: slackEventBlocks(sum) }
  }
  const count = payload.count ?? payload.events.length
  const head = `${count} events`
  const room = SLACK.blocks - 2 // the heading, and the closing "and N more" line
  const shown = payload.events.slice(0, room)
  const blocks: unknown[] = [{ type: 'section', text: mrkdwn(slackText(`*${head}*`, SLACK.sectionText)) }]
  for (const e of shown) blocks.push({ type: 'section', text: mrkdwn(slackText(slackBatchLine(summarise(e)), SLACK.sectionText)) })
  if (count > shown.length) blocks.push({ type: 'context', elements: [mrkdwn(`…and ${count - shown.length} more`)] })
  const lines = shown.map((e) => summarise(e).title)
  return { text: slackText([head, ...lines].join('\n'), SLACK.text), blocks }
}

// ---- Discord --------------------------------------------------------------------------------------------

/** A zero-width space after the @ keeps @everyone and @here from rendering as mentions. */
export const discordSafe = (s: string) => s.replace(/@(everyone|here)/g, '@\u200b$1')

interface Embed {
  title: string
  description?: string
  fields?: { name: string; value: string; inline: boolean }[]
  footer?: { text: string }
  timestamp?: string
}

/** One embed within `budget` characters (title + description + field names and values + footer). */
function discordEmbed(sum: Summary, timestamp: string, budget: number): Embed {
  const title = cut(discordSafe(sum.title), Math.min(DISCORD.title, Math.max(1, budget)))
  let left = budget - title.length
  const embed: Embed = { title }
  const footer = cut(discordSafe(sum.context), Math.min(DISCORD.footer, 200))
  if (footer.length <= left / 2) {
    embed.footer = { text: footer }
    left -= footer.length
  }
  const fields: NonNullable<Embed['fields']> = []
  for (const [k, v] of sum.fields.slice(0, DISCORD.fields)) {
    const name = cut(discordSafe(k), Math.min(DISCORD.fieldName, 64))
    const value = cut(discordSafe(v), Math.min(DISCORD.fieldValue, Math.max(0, left - name.length)))
    if (!value || value === '…') break
    fields.push({ name, value, inline: value.length <= 40 })
    left -= name.length + value.length
  }
  if (fields.length) embed.fields = fields
  if (isoInstant(timestamp) !== null) embed.timestamp = timestamp
  return embed
}

export function discordBody(payload: EventEnvelopeLike | BatchLike): { content: string; embeds: unknown[]; allowed_mentions: { parse: [] } } {
  const events = isBatch(payload) ? payload.events : [payload]
  const shown = events.slice(0, DISCORD.embeds)
  const budget = Math.floor(DISCORD.total / Math.max(1, shown.length))
  const embeds = shown.map((e) => discordEmbed(summarise(e), e.timestamp, budget))
  let content: string
  if (isBatch(payload)) {
    const count = payload.count ?? payload.events.length
    content = `${count} events${count > shown.length ? ` (showing the first ${shown.length})` : ''}`
  } else {
    content = summarise(payload).title
  }
  return { content: cut(discordSafe(content), DISCORD.content), embeds, allowed_mentions: { parse: [] } }
}
