// What the links list does to the links a person ticked: add a tag, move to a folder, archive, delete, through
// PATCH /v1/links/bulk and POST /v1/links/bulk/delete. The server answers one result per id, in order, and one
// bad id does not stop the others, so the outcome names each link that failed and why.
import { useState } from 'preact/hooks'
import { api, explain } from '../../api'
import type { Body, Data } from '../../api-types'
import { announce } from '../../ui/announce'
import { ConfirmButton } from '../../ui/buttons'
import { SelectField, TextField } from '../../ui/form'
import type { Folder } from '../folders/list'
import type { Link } from './model'

type BulkSet = Body<'/links/bulk', 'patch'>['set']
type BulkResult = Data<'/links/bulk', 'patch'>['results'][number] | Data<'/links/bulk/delete', 'post'>['results'][number]

export interface Outcome {
  action: string
  done: number
  failed: { id: string; label: string; message: string }[]
}

function outcomeOf(action: string, results: BulkResult[], byId: Map<string, Link>): Outcome {
  const failed = results
    .filter((r) => !r.ok)
    .map((r) => ({ id: r.id, label: byId.get(r.id)?.slug ?? r.id, message: r.error?.message ?? r.error?.code ?? 'Not changed.' }))
  return { action, done: results.length - failed.length, failed }
}

/** A tag added to links that carry different tags: one call per distinct tag list, each setting its list plus the tag. */
async function addTag(links: Link[], tag: string): Promise<BulkResult[]> {
  const groups = new Map<string, { tags: string[]; ids: string[] }>()
  for (const link of links) {
    const tags = link.tags.includes(tag) ? link.tags : [...link.tags, tag]
    const key = JSON.stringify(tags)
    const group = groups.get(key) ?? { tags, ids: [] }
    group.ids.push(link.id)
    groups.set(key, group)
  }
  const results: BulkResult[] = []
  for (const group of groups.values()) results.push(...(await api.patch<'/links/bulk'>('/links/bulk', { ids: group.ids, set: { tags: group.tags } })).results)
  return results
}

export function SelectionBar({
  selected,
  folders,
  onDone,
  onClear,
}: {
  selected: Link[]
  folders: Folder[]
  onDone: (outcome: Outcome) => void
  onClear: () => void
}) {
  const [tag, setTag] = useState('')
  const [folderId, setFolderId] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const byId = new Map(selected.map((l) => [l.id, l]))
  const ids = selected.map((l) => l.id)
  const count = selected.length === 1 ? '1 link' : `${selected.length} links`

  const run = async (action: string, call: () => Promise<BulkResult[]>) => {
    setBusy(true)
    setError(null)
    try {
      const outcome = outcomeOf(action, await call(), byId)
      announce(`${action}: ${outcome.done} done${outcome.failed.length ? `, ${outcome.failed.length} failed` : ''}`)
      onDone(outcome)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  const patch = (action: string, set: BulkSet) => run(action, async () => (await api.patch<'/links/bulk'>('/links/bulk', { ids, set })).results)

  return (
    <section class="selection-bar" aria-label="Selected links">
      <p aria-live="polite">{count} selected</p>
      <form
        class="toolbar"
        aria-label="Add a tag to the selected links"
        onSubmit={(e) => {
          e.preventDefault()
          const name = tag.trim()
          if (name) void run(`Tagged ${name}`, () => addTag(selected, name))
        }}
      >
        <TextField label="Tag to add" value={tag} onValue={setTag} required maxLength={64} />
        <button type="submit" class="secondary" disabled={busy}>
          Add tag
        </button>
      </form>
      <form
        class="toolbar"
        aria-label="Move the selected links"
        onSubmit={(e) => {
          e.preventDefault()
          const name = folders.find((f) => f.id === folderId)?.name
          void patch(name ? `Moved to ${name}` : 'Taken out of their folder', { folderId: folderId || null })
        }}
      >
        <SelectField
          label="Folder"
          value={folderId}
          onValue={setFolderId}
          options={[{ value: '', label: 'No folder' }, ...folders.map((f) => ({ value: f.id, label: f.name }))]}
        />
        <button type="submit" class="secondary" disabled={busy}>
          Move
        </button>
      </form>
      <div class="org-actions">
        <button type="button" class="secondary" disabled={busy} onClick={() => void patch('Archived', { isArchived: true })}>
          Archive
        </button>
        <button type="button" class="secondary" disabled={busy} onClick={() => void patch('Unarchived', { isArchived: false })}>
          Unarchive
        </button>
        <ConfirmButton
          label="Delete selected"
          title={`Delete ${count}?`}
          confirmLabel={`Delete ${count}`}
          onConfirm={() => run('Deleted', async () => (await api.post<'/links/bulk/delete'>('/links/bulk/delete', { ids })).results)}
        >
          <p>Their short URLs stop working. This cannot be undone.</p>
        </ConfirmButton>
        <button type="button" class="secondary" onClick={onClear}>
          Clear selection
        </button>
      </div>
      {error !== null && (
        <p class="field-error" role="alert">
          {explain(error)}
        </p>
      )}
    </section>
  )
}

export function OutcomeNotice({ outcome }: { outcome: Outcome }) {
  const links = (n: number) => (n === 1 ? '1 link' : `${n} links`)
  return (
    <div class={`bulk-outcome state${outcome.failed.length ? ' error' : ''}`} role={outcome.failed.length ? 'alert' : 'status'}>
      <p>
        {outcome.action}: {links(outcome.done)} done{outcome.failed.length ? `, ${links(outcome.failed.length)} failed` : ''}.
      </p>
      {outcome.failed.length > 0 && (
        <ul>
          {outcome.failed.map((f) => (
            <li key={f.id}>
              <span class="bulk-error">{f.label}</span>: {f.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}
