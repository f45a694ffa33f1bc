// Schemas whose keywords the OpenAPI document publishes while the route's validator checks less, because the
// service applies the real rules with messages that name them, and names every problem at once (a schema
// validator stopping the request first would not). This is for values whose published form is close to, but
// not exactly, what the service accepts: a `format: 'uri'` check (RFC 3986) would refuse URLs the service has
// always taken (an IDN host, an unescaped space or `|`, which the WHATWG parser escapes), and `date-time`
// demands an offset where analytics also reads a local time. A plain `format` keyword cannot be published
// without being enforced (TypeBox checks every format it knows, and refuses ones it does not).

import { Kind, TypeRegistry, type TSchema, type TString, type TUnknown } from '@sinclair/typebox'
import { t } from 'elysia'

/**
 * A string whose other keywords are documentation only: a TypeBox kind of its own, whose check is all that
 * validation runs, while the generator writes the schema's JSON keywords as they are. `kind` names it in the
 * one message a non-string value gets ("Expected kind '<kind>'"): pick a name that says what is expected.
 */
export function publishedString(kind: string, keywords: Record<string, unknown>): TString {
  if (!TypeRegistry.Has(kind)) TypeRegistry.Set(kind, (_schema: TSchema, value: unknown) => typeof value === 'string')
  return { ...keywords, type: 'string', [Kind]: kind } as unknown as TString
}

/**
 * Any value passes the route's validator; the document states exactly what the service accepts. The value
 * reaches the service as `unknown`, so it cannot skip its own check.
 */
export const checkedByService = (published: TSchema | Record<string, unknown>): TUnknown => t.Unknown({ ...published })

export const DOCUMENT_ONLY = 'x-lnk-document-only'

/**
 * Keywords the document states while the route's validator leaves them to the service, spread into a TypeBox
 * schema's options: `t.String({ minLength: 1, maxLength: 2048, ...documentOnly({ format: 'uri' }) })`. The
 * validator still enforces the schema's own keywords (with TypeBox's messages, naming the field), and the service
 * checks these with its own. It is for a schema whose length the validator should check while a `format` or
 * `pattern` is the service's to judge: TypeBox enforces every format it knows (RFC 3986 for uri, which refuses
 * a domain fallback's {DOMAIN} placeholder) and refuses the ones it does not, so a plain keyword cannot be
 * published alone. (publishedString, above, leaves every keyword to the service.)
 */
export const documentOnly = (keywords: Record<string, unknown>): Record<string, unknown> => ({ [DOCUMENT_ONLY]: keywords })

/**
 * An http(s) URL's start, for beside `format: 'uri'`: the scheme in any case, then `//` and the first character
 * of a host, which a browser's URL parser needs while RFC 3986 does not ("http:" is a URI, no URL a browser
 * opens).
 */
export const HTTP_URL_PATTERN = '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#@:]'
