// /pages/:id: the block editor. The page's blocks in reading order, append a block of any type the server
// knows (its form built from the type's schema), edit or delete one, and the public page itself in a frame
// that reloads after every change. One form is open at a time, so each label names one field.
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, ApiError, explain } from '../../api'
import { href, navigate } from '../../router'
import { useSession } from '../../session'
import { announce } from '../../ui/announce'
import { useAction, useAsync } from '../../ui/async'
import { ConfirmButton } from '../../ui/buttons'
import { SelectField } from '../../ui/form'
import { Empty, ErrorNotice, Loaded } from '../../ui/states'
import type { ScreenProps } from '../types'
import type { Block, BlockType, BridgePage } from './model'
import { issuesOf, SchemaFields } from './schema-form'

/** `/bridge-pages/{id}`, filled in. */
type PagePath = `/bridge-pages/${string}`

interface Data {
  page: BridgePage
  blocks: Block[]
  types: BlockType[]
}

export function PageEditor({ params }: ScreenProps) {
  const id = params.id!
  const base = `/bridge-pages/${encodeURIComponent(id)}` as const
  // Bumped after every change: reloads the blocks and the preview.
  const [revision, setRevision] = useState(0)
  const types = useAsync(() => api.get<'/bridge-pages/block-types'>('/bridge-pages/block-types'), [])
  const state = useAsync(async () => {
    const [page, blocks] = await Promise.all([api.get<'/bridge-pages/{id}'>(base), api.get<'/bridge-pages/{pageId}/blocks'>(`${base}/blocks`)])
    return { page, blocks }
  }, [id, revision])
  const changed = (message: string) => {
    announce(message)
    setRevision((n) => n + 1)
  }
  const data = state.data && types.data ? { ...state.data, types: types.data } : undefined
  const merged = (types.status === 'error' ? { ...types, data: undefined } : { ...state, data }) as typeof state & { data?: Data }
  return (
    <>
      <h1 tabIndex={-1}>{state.data ? state.data.page.title : 'Bridge page'}</h1>
      <p>
        <a href={href('/pages')}>All bridge pages</a>
      </p>
      <Loaded state={merged} label="Loading the page…">
        {(d) => <Editor data={d as Data} base={base} changed={changed} />}
      </Loaded>
    </>
  )
}

function Editor({ data, base, changed }: { data: Data; base: PagePath; changed: (message: string) => void }) {
  const { can } = useSession()
  const write = can('pages:write')
  const { page, blocks, types } = data
  // Which form is open: a block's id, 'new', or none.
  const [open, setOpen] = useState<string | null>(null)
  const typeOf = (name: string) => types.find((t) => t.type === name)
  return (
    <div class="editor">
      <section aria-labelledby="blocks-heading">
        <p>
          <span class="visually-hidden">Public address: </span>
          <a href={page.url} target="_blank" rel="noopener noreferrer">
            {page.url}
            <span class="visually-hidden"> (opens in a new tab)</span>
          </a>{' '}
          {page.isTest && <span class="badge test">Test page</span>}
        </p>
        {/* On phones the preview comes after every block: one press away. (A #fragment link would change the route.) */}
        <button type="button" class="secondary small preview-jump" onClick={() => document.getElementById('preview-heading')?.scrollIntoView()}>
          Go to the preview
        </button>
        <h2 id="blocks-heading">Blocks</h2>
        {blocks.length === 0 ? (
          <Empty>This page has no blocks yet.</Empty>
        ) : (
          <ol class="block-list">
            {blocks.map((b) => (
              <BlockItem
                block={b}
                type={typeOf(b.type)}
                base={base}
                write={write}
                open={open === b.id}
                onOpen={(o) => setOpen(o ? b.id : null)}
                changed={changed}
              />
            ))}
          </ol>
        )}
        {write &&
          (open === 'new' ? (
            <AddBlock types={types} base={base} onDone={() => setOpen(null)} changed={changed} />
          ) : (
            <button type="button" onClick={() => setOpen('new')}>
              Add a block
            </button>
          ))}
        {write && <DeletePage page={page} base={base} />}
      </section>
      <Preview page={page} />
    </div>
  )
}

/** The public page in a frame; its address carries the page's version so every change loads afresh. */
function Preview({ page }: { page: BridgePage }) {
  const src = `${page.url}?preview=${page.version}`
  return (
    <section class="preview-pane" aria-labelledby="preview-heading">
      <h2 id="preview-heading">Preview</h2>
      <p class="hint">The public page as visitors see it, reloaded after each change.</p>
      {/* No scripts run in the page anyway; the sandbox also keeps its links from steering the console. */}
      <iframe class="preview" src={src} title={`Preview of ${page.title}`} sandbox="allow-same-origin allow-popups allow-popups-to-escape-sandbox" />
    </section>
  )
}

/** A short line saying what a block holds: its first non-empty text. */
function summary(block: Block): string {
  for (const value of Object.values(block.fields)) if (typeof value === 'string' && value.trim()) return value.length > 80 ? `${value.slice(0, 79)}…` : value
  return ''
}

function BlockItem({
  block,
  type,
  base,
  write,
  open,
  onOpen,
  changed,
}: {
  block: Block
  type: BlockType | undefined
  base: PagePath
  write: boolean
  open: boolean
  onOpen: (open: boolean) => void
  changed: (message: string) => void
}) {
  const title = type?.title ?? block.type
  const path = `${base}/blocks/${encodeURIComponent(block.id)}` as const
  const remove = useAction(async () => {
    await api.del<'/bridge-pages/{pageId}/blocks/{blockId}'>(path)
    changed(`${title} block deleted`)
  })
  return (
    <li>
      <div class="block-head">
        <p>
          <strong>{title}</strong> <span class="block-summary">{summary(block)}</span>
        </p>
        {write && (
          <div class="actions">
            {type && !open && (
              <button type="button" class="secondary small" aria-label={`Edit block ${block.index + 1} (${title})`} onClick={() => onOpen(true)}>
                Edit
              </button>
            )}
            <ConfirmButton
              label={`Delete block ${block.index + 1}`}
              title={`Delete this ${title.toLowerCase()} block?`}
              confirmLabel="Delete block"
              onConfirm={() => remove.run()}
            >
              <p>It disappears from the public page at once.</p>
            </ConfirmButton>
          </div>
        )}
      </div>
      {remove.error != null && <ErrorNotice error={remove.error} />}
      {open && type && (
        <BlockForm
          type={type}
          initial={block.fields}
          submitLabel="Save block"
          onCancel={() => onOpen(false)}
          onSubmit={async (fields) => {
            await api.patch<'/bridge-pages/{pageId}/blocks/{blockId}'>(path, fields)
            onOpen(false)
            changed(`${title} block saved`)
          }}
        />
      )}
    </li>
  )
}

function AddBlock({ types, base, onDone, changed }: { types: BlockType[]; base: PagePath; onDone: () => void; changed: (message: string) => void }) {
  const [chosen, setChosen] = useState(types[0]?.type ?? '')
  const type = types.find((t) => t.type === chosen)
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => heading.current?.focus(), [])
  return (
    <section class="panel" aria-labelledby="add-block">
      <h3 id="add-block" tabIndex={-1} ref={heading}>
        Add a block
      </h3>
      <SelectField
        label="Block type"
        value={chosen}
        onValue={setChosen}
        options={types.map((t) => ({ value: t.type, label: t.title }))}
        hint={type?.description}
      />
      {type && (
        // Keyed by type: a new type starts from its own defaults.
        <BlockForm
          key={type.type}
          type={type}
          initial={type.defaults}
          submitLabel="Add block"
          onCancel={onDone}
          onSubmit={async (fields) => {
            await api.post<'/bridge-pages/{pageId}/blocks'>(`${base}/blocks`, { type: type.type, fields })
            onDone()
            changed(`${type.title} block added`)
          }}
        />
      )}
    </section>
  )
}

function BlockForm({
  type,
  initial,
  submitLabel,
  onSubmit,
  onCancel,
}: {
  type: BlockType
  initial: Record<string, unknown>
  submitLabel: string
  onSubmit: (fields: Record<string, unknown>) => Promise<void>
  onCancel: () => void
}) {
  const [fields, setFields] = useState<Record<string, unknown>>(() => structuredClone(initial))
  const save = useAction(() => onSubmit(fields))
  const issues = save.error instanceof ApiError && save.error.code === 'validation_failed' ? issuesOf(save.error.details) : {}
  return (
    <form
      aria-label={`${type.title} block`}
      onSubmit={(e) => {
        e.preventDefault()
        void save.run()
      }}
    >
      <SchemaFields schema={type.schema} values={fields} onValues={setFields} errors={issues} />
      {save.error != null && (
        <p class="field-error" role="alert">
          {explain(save.error)}
        </p>
      )}
      <div class="actions">
        <button type="submit" disabled={save.busy}>
          {save.busy ? 'Saving…' : submitLabel}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  )
}

function DeletePage({ page, base }: { page: BridgePage; base: PagePath }) {
  const remove = useAction(async () => {
    await api.del<'/bridge-pages/{id}'>(base)
    announce(`${page.title} deleted`)
    navigate('/pages')
  })
  return (
    <section aria-labelledby="page-delete">
      <h2 id="page-delete">Delete the page</h2>
      <ConfirmButton label="Delete page" title={`Delete ${page.title}?`} confirmLabel="Delete page" onConfirm={() => remove.run()}>
        <p>The page, its blocks and its counts are deleted, and {page.url} stops answering. A page a link still shows cannot be deleted.</p>
      </ConfirmButton>
      {remove.error != null && <ErrorNotice error={remove.error} />}
    </section>
  )
}
