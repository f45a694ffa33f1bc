// The published shape of a link's URL fields, shared by the Link's own and its routing rules' and variants'.
import { publishedString } from '../../http/published-schema'

// The format is published, not enforced here: the service's checkUrl decides (see http/published-schema.ts), so
// URLs it accepts that RFC 3986 would not (an IDN host, an unescaped space) keep working, with its messages.
// Each field gets its own copy with its description: the generator keeps the string's description, not the
// null union's, for a nullable field.
export const url = (what?: string) =>
  publishedString('HttpUrl', {
    format: 'uri',
    minLength: 1,
    maxLength: 2048,
    description:
      `${what ? `${what}. ` : ''}Absolute http(s) URL, at most 2048 characters; read as browsers read URLs (WHATWG), so an IDN host or an ` +
      `unescaped space is accepted too`,
  })
