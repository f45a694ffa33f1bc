// TypeBox schemas of folders (contract 7.3): the Folder as answered and carried by its events, and the bodies
// and query of its routes. Names are trimmed and refused blank by the service, which names every problem at once.
import { t, type Static } from 'elysia'
import type { EventDefinition } from '../../events/catalogue'

export const FOLDER_ID_PATTERN = '^fld_[0-9A-Za-z]{1,64}$'
export const isFolderId = (id: string) => new RegExp(FOLDER_ID_PATTERN).test(id)

const Timestamp = t.String({ format: 'date-time' })
const Name = t.String({ minLength: 1, maxLength: 100, description: '1-100 characters, trimmed; not blank. Names need not be unique' })
const Description = t.Union([t.String({ maxLength: 2000 }), t.Null()], { description: 'Free text, at most 2000 characters; null: none' })

export const Folder = t.Object({
  id: t.String({ description: 'fld_…' }),
  name: t.String(),
  description: t.Union([t.String(), t.Null()]),
  linkCount: t.Integer({
    minimum: 0,
    description: "Links in the folder the calling key can see: its mode's links (a live key: live links; a test key: test links), within its scope filters",
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})

export const CreateFolderBody = t.Object({ name: Name, description: t.Optional(Description) }, { additionalProperties: false })
export const UpdateFolderBody = t.Object(
  { name: t.Optional(Name), description: t.Optional(Description) },
  { additionalProperties: false, description: 'Only the fields sent change; null clears the description' },
)

export const DeleteFolderQuery = t.Object({
  moveTo: t.Optional(
    t.String({
      maxLength: 128,
      description: 'fld_…: move the folder’s links (live and test) into this folder of the workspace, in the same transaction as the deletion',
    }),
  ),
  deleteLinks: t.Optional(
    t.Union([t.Literal('true'), t.Literal('false')], {
      description: 'true: delete the folder’s links (live and test), each with its link.deleted event; otherwise a folder with links is refused',
    }),
  ),
})

export const FolderDeleted = t.Object({
  id: t.String(),
  deleted: t.Literal(true),
  movedLinks: t.Integer({ minimum: 0, description: 'Links moved into moveTo' }),
  deletedLinks: t.Integer({ minimum: 0, description: 'Links deleted with the folder (deleteLinks=true)' }),
})

export type FolderView = Static<typeof Folder>
export type CreateFolderInput = Static<typeof CreateFolderBody>
export type UpdateFolderInput = Static<typeof UpdateFolderBody>

/** Folder events carry the folder without its count: the count depends on who asks. */
const FolderData = t.Omit(Folder, ['linkCount'])

export const FOLDER_EVENTS: EventDefinition[] = [
  { type: 'folder.created', description: 'A folder was created.', data: FolderData },
  {
    type: 'folder.updated',
    description: 'A folder was renamed or its description changed; `changes` names the fields that were sent.',
    data: t.Composite([FolderData, t.Object({ changes: t.Array(t.String()) })]),
  },
  {
    type: 'folder.deleted',
    description:
      'A folder was deleted. Its links were moved (movedLinks, into moveTo, each with a link.updated event) or deleted (deletedLinks, each with a ' +
      'link.deleted event) in the same transaction.',
    data: t.Composite([
      FolderData,
      t.Object({ movedLinks: t.Integer(), deletedLinks: t.Integer(), moveTo: t.Union([t.String(), t.Null()], { description: 'fld_…, or null' }) }),
    ]),
  },
]
