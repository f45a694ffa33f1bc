// /folders: the workspace's folders with how many links each holds. A folder that still holds links is only
// deleted once the person chooses what happens to them: moved to another folder (or out of any), or deleted.
import { useState } from 'preact/hooks'
import { api, explain } from '../../api'
import type { Data } from '../../api-types'
import { href } from '../../router'
import { useSession } from '../../session'
import { announce } from '../../ui/announce'
import { useAction, useAsync } from '../../ui/async'
import { ConfirmButton } from '../../ui/buttons'
import { SelectField, TextField } from '../../ui/form'
import { Empty, Loaded } from '../../ui/states'
import { CountTable, EditRow } from '../count-table'

export type Folder = Data<'/folders', 'get'>[number]

const links = (n: number) => (n === 1 ? '1 link' : `${n.toLocaleString()} links`)

export function FoldersScreen() {
  const { can } = useSession()
  const state = useAsync(() => api.get<'/folders'>('/folders'), [])
  const canWrite = can('links:write')
  return (
    <>
      <h1 tabIndex={-1}>Folders</h1>
      <p class="hint">Each link sits in at most one folder. Open a folder to see its links.</p>
      {canWrite && <NewFolder onCreated={state.reload} />}
      <h2>Your folders</h2>
      <Loaded state={state} label="Loading folders…">
        {(folders) =>
          folders.length === 0 ? (
            <Empty>No folders yet.</Empty>
          ) : (
            <CountTable noun="Folder" canWrite={canWrite}>
              {folders.map((folder) => (
                <FolderRow key={folder.id} folder={folder} others={folders.filter((f) => f.id !== folder.id)} canWrite={canWrite} onChanged={state.reload} />
              ))}
            </CountTable>
          )
        }
      </Loaded>
    </>
  )
}

function NewFolder({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const create = useAction(async () => {
    const made = await api.post<'/folders'>('/folders', { name: name.trim(), description: description.trim() || null })
    setName('')
    setDescription('')
    announce(`Folder ${made.name} created`)
    onCreated()
  })
  return (
    <form
      class="panel toolbar"
      aria-label="New folder"
      onSubmit={(e) => {
        e.preventDefault()
        void create.run()
      }}
    >
      <TextField label="Folder name" value={name} onValue={setName} required maxLength={100} error={create.error ? explain(create.error) : null} />
      <TextField label="Description" value={description} onValue={setDescription} />
      <button type="submit" disabled={create.busy}>
        {create.busy ? 'Creating…' : 'Create folder'}
      </button>
    </form>
  )
}

function FolderRow({ folder, others, canWrite, onChanged }: { folder: Folder; others: Folder[]; canWrite: boolean; onChanged: () => void }) {
  const [editing, setEditing] = useState(false)
  const editId = `edit-${folder.id}`
  // Back on the row's Edit button when the form closes, so keyboard users stay where they were.
  const close = () => (setEditing(false), requestAnimationFrame(() => document.getElementById(editId)?.focus()))
  const [name, setName] = useState(folder.name)
  const [description, setDescription] = useState(folder.description ?? '')
  // What happens to the links of a non-empty folder: moved into another folder (`moveTo`), or deleted.
  const [fate, setFate] = useState<'move' | 'delete'>(others.length ? 'move' : 'delete')
  const [moveTo, setMoveTo] = useState(others[0]?.id ?? '')
  // The folders may have changed since the choice was made (a reload): only a folder still listed is a target.
  const target = others.some((f) => f.id === moveTo) ? moveTo : others[0]?.id
  const choice = target ? fate : 'delete'
  const save = useAction(async () => {
    await api.patch<'/folders/{id}'>(`/folders/${encodeURIComponent(folder.id)}`, { name: name.trim(), description: description.trim() || null })
    close()
    announce('Folder saved')
    onChanged()
  })
  const remove = async () => {
    const query = folder.linkCount === 0 ? '' : choice === 'delete' ? '?deleteLinks=true' : `?moveTo=${encodeURIComponent(target!)}`
    await api.del<'/folders/{id}'>(`/folders/${encodeURIComponent(folder.id)}${query}`)
    announce(`Folder ${folder.name} deleted`)
    onChanged()
  }
  if (editing)
    return (
      <EditRow label={`Edit folder ${folder.name}`} noun="folder" busy={save.busy} onSave={() => void save.run()} onCancel={close}>
        <TextField label="Rename to" value={name} onValue={setName} required maxLength={100} error={save.error ? explain(save.error) : null} />
        <TextField label="New description" value={description} onValue={setDescription} />
      </EditRow>
    )
  return (
    <tr>
      <td>
        <a href={href('/links', { folderId: folder.id })} aria-label={`Links in ${folder.name}`}>
          {folder.name}
        </a>
        {folder.description && <div class="small-text">{folder.description}</div>}
      </td>
      <td class="num">{folder.linkCount.toLocaleString()}</td>
      {canWrite && (
        <td>
          <div class="org-actions">
            <button
              type="button"
              class="secondary small"
              id={editId}
              aria-label={`Edit ${folder.name}`}
              onClick={() => (setName(folder.name), setDescription(folder.description ?? ''), setEditing(true))}
            >
              Edit
            </button>
            <ConfirmButton label={`Delete ${folder.name}`} title={`Delete the folder ${folder.name}?`} confirmLabel="Delete folder" onConfirm={remove}>
              {folder.linkCount === 0 ? (
                <p>The folder is empty.</p>
              ) : (
                <fieldset class="choice">
                  <legend>It holds {links(folder.linkCount)}. What should happen to them?</legend>
                  {others.length > 0 && (
                    <>
                      <div>
                        <input type="radio" id={`${folder.id}-move`} name={`${folder.id}-fate`} checked={choice === 'move'} onChange={() => setFate('move')} />
                        <label for={`${folder.id}-move`}>Move them to another folder</label>
                      </div>
                      {choice === 'move' && (
                        <SelectField
                          label="Move the links to"
                          value={target!}
                          onValue={setMoveTo}
                          options={others.map((f) => ({ value: f.id, label: f.name }))}
                        />
                      )}
                    </>
                  )}
                  <div>
                    <input
                      type="radio"
                      id={`${folder.id}-delete`}
                      name={`${folder.id}-fate`}
                      checked={choice === 'delete'}
                      onChange={() => setFate('delete')}
                    />
                    <label for={`${folder.id}-delete`}>Delete the links too</label>
                  </div>
                </fieldset>
              )}
            </ConfirmButton>
          </div>
        </td>
      )}
    </tr>
  )
}
