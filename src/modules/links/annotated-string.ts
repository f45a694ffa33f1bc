// String schemas whose keywords (format, lengths, pattern, anyOf) the OpenAPI document publishes while the
// route's validator checks only that the value is a string. The service applies the real rules, with messages
// that name them. This is for values whose published format is close to, but not exactly, what the service
// accepts: a `format: 'uri'` check (RFC 3986) would refuse URLs the service has always taken (an IDN host, an
// unescaped space or `|`, which the WHATWG parser escapes), and `date-time` demands an offset where analytics
// also reads a local time. A plain `format` keyword cannot be published without being enforced (TypeBox checks
// every format it knows, and refuses ones it does not), so these schemas are a TypeBox kind of their own: the
// check below is all that validation runs, and the generator writes the schema's JSON keywords as they are.
import { Kind, TypeRegistry, type TSchema, type TString } from '@sinclair/typebox'

/**
 * A string whose other keywords are documentation only. `kind` names it in the one message a non-string
 * value gets ("Expected kind '<kind>'"), so pick a name that says what is expected (HttpUrl, DateOrDateTime).
 */
export function annotatedString(kind: string, keywords: Record<string, unknown>): TString {
  if (!TypeRegistry.Has(kind)) TypeRegistry.Set(kind, (_schema: TSchema, value: unknown) => typeof value === 'string')
  return { ...keywords, type: 'string', [Kind]: kind } as unknown as TString
}
