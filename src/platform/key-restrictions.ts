// A key's restrictions in the shape they are sent, answered and stored: shared by the identity and api-keys
// models (validation, OpenAPI) and the database column types, so the shape is declared once, down here.
import { type Static, Type } from '@sinclair/typebox'

// Both are the shape a key's restriction is stored in and answered with (views and columns); requests are
// checked by the stricter input schemas of api-keys/model.ts, which state the allowed days and zones.
// Rules across fields (at least one domain, tag or folder, a non-empty list of days, start and end that differ) are
// the service's, which names each problem; unknown fields are refused like everywhere in a body.
export const ScopeFilters = Type.Object(
  {
    domains: Type.Optional(Type.Array(Type.String(), { description: 'Domains whose links are in scope (lower-cased)' })),
    tags: Type.Optional(Type.Array(Type.String(), { description: 'A link is in scope when it carries one of these tags' })),
    folders: Type.Optional(
      Type.Array(Type.String(), { description: 'fld_…: a link is in scope when it is filed in one of these folders; the key sees only these folders' }),
    ),
  },
  { additionalProperties: false, description: 'At least one of domains, tags and folders names something; a link must match every list given' },
)

export const Schedule = Type.Object(
  {
    timezone: Type.String({ description: 'IANA time zone, e.g. Europe/Berlin' }),
    days: Type.Array(Type.Integer({ minimum: 0, maximum: 6 }), { description: 'Days the window opens on, 0 = Sunday; at least one' }),
    startMinute: Type.Integer({ minimum: 0, maximum: 1439, description: 'Minutes after local midnight' }),
    endMinute: Type.Integer({ minimum: 0, maximum: 1440, description: 'Exclusive; below startMinute the window wraps midnight; never equal to it' }),
  },
  { additionalProperties: false },
)
export type Schedule = Static<typeof Schedule>
export type ScopeFilters = Static<typeof ScopeFilters>
