// Links named by the caller's own id (contract 7.3): the externalId field's rule, and the `ext_` form of a
// link's path parameter. Link ids are UUIDs (hex digits and dashes), so a parameter that starts with `ext_`
// can only be an externalId, and no lookup has to guess.
import { t } from 'elysia'

export const EXTERNAL_ID_PREFIX = 'ext_'
export const EXTERNAL_ID_MAX = 255
/** Control characters are refused: PostgreSQL cannot store NUL in text, and the others only hide in logs. */
const PATTERN = '^[^\\u0000-\\u001F\\u007F]+$'
const VALID = new RegExp(PATTERN)

const RULE =
  `1-${EXTERNAL_ID_MAX} characters, any but control characters (U+0000-U+001F, U+007F); case-sensitive, unique within the workspace ` +
  '(409 external_id_taken)'

/** The link field: the caller's own id for the link; null clears it on PATCH. */
export const ExternalIdField = t.Optional(
  t.Union([t.String({ minLength: 1, maxLength: EXTERNAL_ID_MAX, pattern: PATTERN }), t.Null()], {
    description: `Your own id for the link (say, the id of the record it was made for): ${RULE}. The link can then be addressed as ext_{externalId}`,
  }),
)

/** The path parameter of /links/{id}: a link's id, or ext_ and its externalId. */
export const LinkIdParams = t.Object({
  id: t.String({
    description: 'The link id (UUID), or ext_ followed by the link\'s externalId, percent-encoded like any path segment (ext_order%2F42 names "order/42")',
  }),
})

/**
 * The externalId a link reference names, when it is of the ext_ form (already percent-decoded by the router)
 * and one a link could carry: an id no link can have is no query to send (PostgreSQL refuses a NUL in text).
 */
export function externalIdOf(ref: string): string | undefined {
  if (!ref.startsWith(EXTERNAL_ID_PREFIX)) return undefined
  const id = ref.slice(EXTERNAL_ID_PREFIX.length)
  return id.length <= EXTERNAL_ID_MAX && VALID.test(id) ? id : undefined
}
