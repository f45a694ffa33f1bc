// What the block files share: the shape every fields schema takes (a named, closed object) and the URL rules.
// Checks name the problem for the author; the `safe…` twins are what renderers use, because a stored value
// may predate a rule or reach the renderer without validation (defence in depth).
import type { TProperties } from '@sinclair/typebox'
import { t } from 'elysia'
import type { FieldIssue } from './types'

export { escapeHtml as esc } from '../../../platform/html'

export const MAX_URL_LENGTH = 2048

/** A block's fields schema: closed, titled `BlockFields_<type>` so the OpenAPI document can name it. */
export const fieldsSchema = <P extends TProperties>(type: string, properties: P, description: string) =>
  t.Object(properties, { additionalProperties: false, title: `BlockFields_${type}`, description })

/** A URL field; the scheme is check()'s, so a bad one is named with a readable message. */
export const UrlString = (description: string, minLength = 1) => t.String({ minLength, maxLength: MAX_URL_LENGTH, description })

const WEB = ['http', 'https'] as const
export const TEXT_LINK_SCHEMES = ['http', 'https', 'mailto', 'tel'] as const

/**
 * The URL's scheme when `value` is a URL of one of `schemes`, else null. Whitespace and control characters
 * are refused outright: browsers strip some of them while parsing, which is how `java\nscript:` sneaks past
 * a naive prefix test.
 */
function allowedScheme(value: unknown, schemes: readonly string[]): string | null {
  if (typeof value !== 'string' || value.length > MAX_URL_LENGTH || /[\s\x00-\x1f\x7f]/.test(value)) return null
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(value)?.[1]?.toLowerCase()
  if (!scheme || !schemes.includes(scheme)) return null
  let parsed: URL
  try {
    parsed = new URL(value)
  } catch {
    return null
  }
  if (parsed.protocol !== `${scheme}:`) return null
  if ((scheme === 'http' || scheme === 'https') && !parsed.hostname) return null
  return scheme
}

export const safeUrl = (value: unknown, schemes: readonly string[] = WEB): string | null => (allowedScheme(value, schemes) ? (value as string) : null)

export const safeHttpsUrl = (value: unknown): string | null => safeUrl(value, ['https'])

const describe = (schemes: readonly string[]) =>
  schemes.length === 1
    ? `an ${schemes[0]} URL`
    : `a URL starting with ${schemes
        .slice(0, -1)
        .map((s) => `${s}:`)
        .join(', ')} or ${schemes.at(-1)}:`

/** An issue when `value` is not a URL of `schemes` (http and https unless told). */
export function urlIssue(path: string, value: string, schemes: readonly string[] = WEB): FieldIssue[] {
  return safeUrl(value, schemes) ? [] : [{ path, message: `Must be ${describe(schemes)} without spaces` }]
}

/** Image sources are https only: the page's Content-Security-Policy loads no other images. */
export const imageUrlIssue = (path: string, value: string): FieldIssue[] =>
  safeHttpsUrl(value) ? [] : [{ path, message: 'Must be an https URL without spaces (pages load images over https only)' }]

/** Turns a possibly-null value into trimmed text (renderers never trust a field's type). */
export const text = (value: unknown): string => (typeof value === 'string' ? value.trim() : '')
