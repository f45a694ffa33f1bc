// The link form's values and how they become a create or PATCH body. The form keeps every value as the text
// or checkbox a person edits; the body is what the API expects (null clears, numbers as numbers, expiry as
// an ISO instant). An edit compares the body of the form with the body of the link as loaded, so a PATCH
// carries only what the person changed.
import { ApiError } from '../../api'
import type { Body, Schema } from '../../api-types'
import { rulesBody, rulesOf, variantsBody, variantsOf, type RuleDraft, type VariantDraft } from './routing-model'

/** A link as the API answers it (the document's Link schema). */
export type Link = Schema<'Link'>
/** POST /v1/links and PATCH /v1/links/{id} bodies. */
export type CreateBody = Body<'/links', 'post'>
export type PatchBody = Body<'/links/{id}', 'patch'>

export const TEXT_FIELDS = [
  'destinationUrl',
  'slug',
  'domain',
  'title',
  'description',
  'folderId',
  'campaignId',
  'fallbackUrl',
  'utmSource',
  'utmMedium',
  'utmCampaign',
  'utmTerm',
  'utmContent',
  'ogTitle',
  'ogDescription',
  'ogImageUrl',
  'twitterCard',
  'bridgePageId',
] as const
export const NUMBER_FIELDS = ['clickLimit', 'uniqueIpLimit', 'redirectStatus'] as const
export const FLAG_FIELDS = [
  'publicStatsEnabled',
  'deepLinkEnabled',
  'captchaEnabled',
  'consentRequired',
  'conversionTracking',
  'isActive',
  'isArchived',
] as const
/** Fields the API requires as strings and never clears: an empty box means "leave it out". */
const NOT_NULLABLE = new Set<string>(['destinationUrl', 'slug', 'domain'])

type TextField = (typeof TEXT_FIELDS)[number]
type NumberField = (typeof NUMBER_FIELDS)[number]
type FlagField = (typeof FLAG_FIELDS)[number]

export type LinkForm = Record<TextField | NumberField | 'tags' | 'expiresAt' | 'password', string> &
  Record<FlagField | 'clearPassword', boolean> & { routingRules: RuleDraft[]; variants: VariantDraft[] }

export const UTM_FIELDS = [
  ['utmSource', 'utm_source', 'Source'],
  ['utmMedium', 'utm_medium', 'Medium'],
  ['utmCampaign', 'utm_campaign', 'Campaign'],
  ['utmTerm', 'utm_term', 'Term'],
  ['utmContent', 'utm_content', 'Content'],
] as const

export function emptyForm(): LinkForm {
  const form = {} as LinkForm
  for (const f of TEXT_FIELDS) form[f] = ''
  for (const f of NUMBER_FIELDS) form[f] = ''
  for (const f of FLAG_FIELDS) form[f] = false
  return { ...form, redirectStatus: '302', tags: '', expiresAt: '', password: '', clearPassword: false, isActive: true, routingRules: [], variants: [] }
}

export function formOf(link: Link): LinkForm {
  const form = emptyForm()
  for (const f of TEXT_FIELDS) form[f] = link[f] ?? ''
  for (const f of NUMBER_FIELDS) form[f] = link[f] == null ? '' : String(link[f])
  for (const f of FLAG_FIELDS) form[f] = link[f]
  return {
    ...form,
    tags: link.tags.join(', '),
    expiresAt: link.expiresAt ? toLocalInput(link.expiresAt) : '',
    routingRules: rulesOf(link.routingRules),
    variants: variantsOf(link.variants),
  }
}

/** An ISO instant as a datetime-local value in the viewer's time zone. */
export function toLocalInput(iso: string): string {
  const d = new Date(iso)
  const two = (n: number) => String(n).padStart(2, '0')
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}T${two(d.getHours())}:${two(d.getMinutes())}`
}

/** A datetime-local value (the viewer's zone) as the ISO instant the API takes; unreadable text goes as typed, for the server to name. */
export function fromLocalInput(value: string): string {
  const d = new Date(value)
  return Number.isFinite(d.getTime()) ? d.toISOString() : value
}

const whole = (text: string): number | string => (/^\s*\d+\s*$/.test(text) ? Number(text) : text)

export const splitTags = (text: string) => [
  ...new Set(
    text
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean),
  ),
]

/** The body the form stands for, every field present (null where empty), password aside. */
function fullBody(form: LinkForm): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  for (const f of TEXT_FIELDS) body[f] = form[f].trim() === '' ? null : form[f].trim()
  for (const f of NUMBER_FIELDS) body[f] = form[f].trim() === '' ? null : whole(form[f])
  for (const f of FLAG_FIELDS) body[f] = form[f]
  body.tags = splitTags(form.tags)
  body.expiresAt = form.expiresAt ? fromLocalInput(form.expiresAt) : null
  body.routingRules = rulesBody(form.routingRules)
  body.variants = variantsBody(form.variants)
  return body
}

/**
 * A create body: only what the person filled in. Values go as typed where they do not parse (a slug, a URL):
 * the server checks them and names the field, so the body is the API's shape in name only.
 */
export function createBody(form: LinkForm): CreateBody {
  const body: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(fullBody(form))) {
    if (value === null || value === false || (Array.isArray(value) && !value.length)) continue
    if (name === 'isActive' || name === 'isArchived') continue
    body[name] = value
  }
  if (form.password) body.password = form.password
  return body as CreateBody
}

/** A PATCH body: the fields whose value differs from the link as loaded; null clears. */
export function patchBody(initial: LinkForm, form: LinkForm): PatchBody {
  const before = fullBody(initial)
  const after = fullBody(form)
  const body: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(after)) {
    if (JSON.stringify(value) === JSON.stringify(before[name])) continue
    if (value === null && NOT_NULLABLE.has(name)) continue
    body[name] = value
  }
  if (form.clearPassword) body.password = null
  else if (form.password) body.password = form.password
  return body as PatchBody
}

/** The destination as visitors reach it: the link's UTM values replace the same keys. Null when the URL does not parse. */
export function finalDestination(form: Pick<LinkForm, 'destinationUrl' | (typeof UTM_FIELDS)[number][0]>): string | null {
  let url: URL
  try {
    url = new URL(form.destinationUrl.trim())
  } catch {
    return null
  }
  for (const [field, param] of UTM_FIELDS) if (form[field].trim()) url.searchParams.set(param, form[field].trim())
  return url.href
}

/** A 400's issues, each with its path ('' when it names none). */
export function issuesOf(error: unknown): { path: string; message: string }[] {
  if (!(error instanceof ApiError)) return []
  const issues = (error.details as { issues?: { path?: string; message: string }[] } | undefined)?.issues
  return (issues ?? []).map((i) => ({ path: i.path ?? '', message: i.message }))
}

/**
 * A 400's issues by the form field they name (`tags.2` → `tags`); what names no field of the form is kept
 * under '' so it shows by the save button.
 */
export function fieldErrors(error: unknown, fields: ReadonlySet<string>): Record<string, string> {
  if (!(error instanceof ApiError)) return {}
  const issues = (error.details as { issues?: { path?: string; message: string }[] } | undefined)?.issues
  if (!issues?.length) return {}
  const out: Record<string, string> = {}
  for (const issue of issues) {
    const top = (issue.path ?? '').split('.')[0] ?? ''
    const key = fields.has(top) ? top : ''
    const text = key ? issue.message : `${issue.path ? `${issue.path}: ` : ''}${issue.message}`
    out[key] = out[key] ? `${out[key]}; ${text}` : text
  }
  return out
}

export const FORM_FIELDS: ReadonlySet<string> = new Set([
  ...TEXT_FIELDS,
  ...NUMBER_FIELDS,
  ...FLAG_FIELDS,
  'tags',
  'expiresAt',
  'password',
  'routingRules',
  'variants',
])
