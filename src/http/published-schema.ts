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
