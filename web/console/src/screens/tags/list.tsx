// /tags: the workspace's tags with how many links carry each. A rename or a delete changes every link that
// carries the tag (the server does it in one transaction), so both say how many links they touch first.
import { useState } from 'preact/hooks'
import { api, explain } from '../../api'
import type { Data } from '../../api-types'
import { href } from '../../router'
import { useSession } from '../../session'
import { announce } from '../../ui/announce'
import { useAction, useAsync } from '../../ui/async'
import { ConfirmButton } from '../../ui/buttons'
import { TextField } from '../../ui/form'
import { Empty, Loaded } from '../../ui/states'
import { CountTable, EditRow } from '../count-table'

type Tag = Data<'/tags', 'get'>[number]

const COLOUR = /^#[0-9a-f]{6}$/i
const COLOUR_HINT = 'A colour as #rrggbb (for example #2f6fdf), or empty for none.'
const links = (n: number) => (n === 1 ? '1 link' : `${n.toLocaleString()} links`)

/** The colour box's text as the API field: null for none; a bad value is caught before sending. */
function colourOf(text: string): { color: string | null; error: string | null } {
  const value = text.trim()
  if (!value) return { color: null, error: null }
  return COLOUR.test(value) ? { color: value.toLowerCase(), error: null } : { color: null, error: `"${value}" is not a colour. ${COLOUR_HINT}` }
}

/** Moves focus into a row's edit form when it opens, so keyboard users land on what they asked to edit. */

export const Swatch = ({ color }: { color: string | null | undefined }) =>
  color ? <span class="swatch" style={{ background: color }} aria-hidden="true" /> : <span class="swatch none" aria-hidden="true" />

export function TagsScreen() {
  const { can } = useSession()
  const state = useAsync(() => api.get<'/tags'>('/tags'), [])
  const canWrite = can('links:write')
  return (
    <>
      <h1 tabIndex={-1}>Tags</h1>
      <p class="hint">Tags group links across folders. A link may carry several; a name used on a link becomes a tag here.</p>
      {canWrite && <NewTag onCreated={state.reload} />}
      <h2>Your tags</h2>
      <Loaded state={state} label="Loading tags…">
        {(tags) =>
          tags.length === 0 ? (
            <Empty>No tags yet.</Empty>
          ) : (
            <CountTable noun="Tag" canWrite={canWrite}>
              {tags.map((tag) => (
                <TagRow key={tag.id} tag={tag} canWrite={canWrite} onChanged={state.reload} />
              ))}
            </CountTable>
          )
        }
      </Loaded>
    </>
  )
}

function NewTag({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState('')
  const [colour, setColour] = useState('')
  const [colourError, setColourError] = useState<string | null>(null)
  const create = useAction(async () => {
    const { color, error } = colourOf(colour)
    setColourError(error)
    if (error) return
    const made = await api.post<'/tags'>('/tags', { name: name.trim(), color })
    setName('')
    setColour('')
    announce(`Tag ${made.name} created`)
    onCreated()
  })
  return (
    <form
      class="panel toolbar"
      aria-label="New tag"
      onSubmit={(e) => {
        e.preventDefault()
        void create.run()
      }}
    >
      <TextField label="Tag name" value={name} onValue={setName} required maxLength={64} error={create.error ? explain(create.error) : null} />
      <TextField label="Colour" value={colour} onValue={setColour} placeholder="#2f6fdf" hint={COLOUR_HINT} error={colourError} />
      <button type="submit" disabled={create.busy}>
        {create.busy ? 'Creating…' : 'Create tag'}
      </button>
    </form>
  )
}

function TagRow({ tag, canWrite, onChanged }: { tag: Tag; canWrite: boolean; onChanged: () => void }) {
  const [editing, setEditing] = useState(false)
  const editId = `edit-${tag.id}`
  // Back on the row's Edit button when the form closes, so keyboard users stay where they were.
  const close = () => (setEditing(false), requestAnimationFrame(() => document.getElementById(editId)?.focus()))
  const [name, setName] = useState(tag.name)
  const [colour, setColour] = useState(tag.color ?? '')
  const [colourError, setColourError] = useState<string | null>(null)
  const save = useAction(async () => {
    const { color, error } = colourOf(colour)
    setColourError(error)
    if (error) return
    const body: { name?: string; color?: string | null } = {}
    if (name.trim() !== tag.name) body.name = name.trim()
    if (color !== (tag.color ?? null)) body.color = color
    if (Object.keys(body).length) await api.patch<'/tags/{id}'>(`/tags/${encodeURIComponent(tag.id)}`, body)
    close()
    announce(body.name ? `Tag renamed to ${body.name} on ${links(tag.linkCount)}` : 'Tag saved')
    onChanged()
  })
  const remove = async () => {
    await api.del<'/tags/{id}'>(`/tags/${encodeURIComponent(tag.id)}`)
    announce(`Tag ${tag.name} deleted`)
    onChanged()
  }
  if (editing)
    return (
      <EditRow label={`Edit tag ${tag.name}`} noun="tag" busy={save.busy} onSave={() => void save.run()} onCancel={close}>
        <TextField label="Rename to" value={name} onValue={setName} required maxLength={64} error={save.error ? explain(save.error) : null} />
        <TextField label="New colour" value={colour} onValue={setColour} placeholder="#2f6fdf" hint={COLOUR_HINT} error={colourError} />
      </EditRow>
    )
  return (
    <tr>
      <td>
        <Swatch color={tag.color} />
        <a href={href('/links', { tag: tag.name })} aria-label={`Links tagged ${tag.name}`}>
          {tag.name}
        </a>
      </td>
      <td class="num">{tag.linkCount.toLocaleString()}</td>
      {canWrite && (
        <td>
          <div class="org-actions">
            <button
              type="button"
              class="secondary small"
              id={editId}
              aria-label={`Edit ${tag.name}`}
              onClick={() => (setName(tag.name), setColour(tag.color ?? ''), setColourError(null), setEditing(true))}
            >
              Edit
            </button>
            <ConfirmButton label={`Delete ${tag.name}`} title={`Delete the tag ${tag.name}?`} confirmLabel="Delete tag" onConfirm={remove}>
              <p>The tag is removed from {links(tag.linkCount)}. The links themselves stay.</p>
            </ConfirmButton>
          </div>
        </td>
      )}
    </tr>
  )
}
