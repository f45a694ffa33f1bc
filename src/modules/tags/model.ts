// TypeBox shapes of tags as resources (contract 7.3): the Tag, its create and change bodies, and the tag.*
// events. A tag's name follows a link's tag names (links/model.ts: 1-64 characters, trimmed, case-sensitive).
import { t, type Static } from 'elysia'
import type { EventDefinition } from '../../events/catalogue'

export const TAG_NAME_MAX = 64
export const COLOR_PATTERN = '^#[0-9A-Fa-f]{6}$'

const Name = t.String({
  minLength: 1,
  maxLength: TAG_NAME_MAX,
  description: 'As a link carries it: 1-64 characters, case-sensitive, leading and trailing spaces trimmed; unique in the workspace',
})
const Color = t.Union([t.String({ pattern: COLOR_PATTERN, description: '#rrggbb (hex digits; stored lower-case)' }), t.Null()], {
  description: '#rrggbb, or null for none',
})
const Timestamp = t.String({ format: 'date-time' })

export const Tag = t.Object(
  {
    id: t.String({ description: 'tag_…' }),
    name: t.String(),
    color: t.Union([t.String(), t.Null()], { description: '#rrggbb or null' }),
    linkCount: t.Integer({ minimum: 0, description: 'Links carrying the tag, among those the key sees (its mode and scope filters)' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Tag' },
)
export type TagView = Static<typeof Tag>

export const CreateTagBody = t.Object({ name: Name, color: t.Optional(Color) }, { additionalProperties: false, title: 'TagCreate' })
export type CreateTagInput = Static<typeof CreateTagBody>

export const UpdateTagBody = t.Object(
  {
    name: t.Optional({ ...Name, description: 'A new name: renamed on every link of the workspace that carries the tag, in one transaction' }),
    color: t.Optional(Color),
  },
  { additionalProperties: false, title: 'TagUpdate' },
)
export type UpdateTagInput = Static<typeof UpdateTagBody>

// --- Events (contract section 5) --------------------------------------------------------------------------

/** A tag as its events carry it: no linkCount (it depends on who asks). */
const TagData = t.Object({ id: t.String(), name: t.String(), color: t.Union([t.String(), t.Null()]), createdAt: Timestamp, updatedAt: Timestamp })
export type TagEventData = Static<typeof TagData>

export const TAG_EVENTS: EventDefinition[] = [
  {
    type: 'tag.created',
    description: 'A tag was created: by POST /tags, or by a link (created, changed or created in bulk) using a name that was not a tag yet.',
    data: TagData,
  },
  {
    type: 'tag.updated',
    description: 'A tag was renamed or recoloured; a rename changed `linksChanged` links, and `previousName` is its old name.',
    data: t.Composite([TagData, t.Object({ changes: t.Array(t.String()), previousName: t.String(), linksChanged: t.Integer({ minimum: 0 }) })]),
  },
  {
    type: 'tag.deleted',
    description: 'A tag was deleted and removed from every link that carried it (`linksChanged`).',
    data: t.Composite([TagData, t.Object({ linksChanged: t.Integer({ minimum: 0 }) })]),
  },
]
