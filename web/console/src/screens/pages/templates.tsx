// /pages/templates: the built-in templates (GET /v1/templates, filtered by category, tag and words), and
// with pages:write, creating a page from one (or a blank page) and going on to its editor.
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, explain } from '../../api'
import { href, navigate } from '../../router'
import { useSession } from '../../session'
import { useAction, useAsync } from '../../ui/async'
import { SelectField, TextField } from '../../ui/form'
import { Empty, Loaded } from '../../ui/states'
import type { ScreenProps } from '../types'
import type { Template } from './model'

/** Chosen: a template, or null for a blank page. */
type Choice = { template: Template | null }

export function TemplateGallery({ query }: ScreenProps) {
  const { can } = useSession()
  const category = query.get('category') ?? ''
  const tag = query.get('tag') ?? ''
  const q = query.get('q') ?? ''
  const [words, setWords] = useState(q)
  const [choice, setChoice] = useState<Choice | null>(null)
  // Every template once, for the filters' options; then the filtered list the server answers.
  const all = useAsync(() => api.get<'/templates'>('/templates', { limit: 100 }), [])
  const shown = useAsync(() => api.get<'/templates'>('/templates', { category, tag, q, limit: 100 }), [category, tag, q])
  const filter = (next: Record<string, string>) => navigate('/pages/templates', { category, tag, q, ...next })
  const categories = [...new Set((all.data ?? []).map((t) => t.category))].sort()
  const tags = [...new Set((all.data ?? []).flatMap((t) => t.tags))].sort()
  return (
    <>
      <h1 tabIndex={-1}>Templates</h1>
      <p>
        <a href={href('/pages')}>All bridge pages</a>
      </p>
      {choice && <CreatePage choice={choice} onCancel={() => setChoice(null)} />}
      <form
        class="toolbar"
        role="search"
        aria-label="Filter templates"
        onSubmit={(e) => {
          e.preventDefault()
          filter({ q: words.trim() })
        }}
      >
        <SelectField
          label="Category"
          value={category}
          onValue={(v) => filter({ category: v })}
          options={[{ value: '', label: 'All categories' }, ...categories]}
        />
        <SelectField label="Tag" value={tag} onValue={(v) => filter({ tag: v })} options={[{ value: '', label: 'All tags' }, ...tags]} />
        <TextField label="Search templates" type="search" value={words} onValue={setWords} />
        <button type="submit" class="secondary">
          Search
        </button>
      </form>
      <Loaded state={shown} label="Loading templates…">
        {(templates) => (
          <ul class="cards template-cards">
            {can('pages:write') && (
              <li class="panel">
                <h2>Blank page</h2>
                <p>An empty page to fill with blocks of your own.</p>
                <button type="button" class="secondary" onClick={() => setChoice({ template: null })}>
                  Start blank
                </button>
              </li>
            )}
            {templates.length === 0 && (
              <li>
                <Empty>No template matches these filters.</Empty>
              </li>
            )}
            {templates.map((t) => (
              <li class="panel">
                <h2>{t.name}</h2>
                <p>{t.description}</p>
                <p class="hint">
                  {t.category} · {t.blockCount} blocks · {t.tags.join(', ')}
                </p>
                {can('pages:write') && (
                  <button type="button" aria-label={`Use template ${t.name}`} onClick={() => setChoice({ template: t })}>
                    Use template
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
      </Loaded>
    </>
  )
}

function CreatePage({ choice, onCancel }: { choice: Choice; onCancel: () => void }) {
  const [title, setTitle] = useState(choice.template?.name ?? '')
  const [slug, setSlug] = useState('')
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => heading.current?.focus(), [choice])
  const create = useAction(async () => {
    const page = await api.post<'/bridge-pages'>('/bridge-pages', {
      title: title.trim(),
      ...(slug.trim() ? { slug: slug.trim() } : {}),
      ...(choice.template ? { templateSlug: choice.template.slug } : {}),
    })
    navigate(`/pages/${page.id}`)
  })
  return (
    <form
      class="panel"
      aria-labelledby="create-page"
      onSubmit={(e) => {
        e.preventDefault()
        void create.run()
      }}
    >
      <h2 id="create-page" tabIndex={-1} ref={heading}>
        {choice.template ? `New page from “${choice.template.name}”` : 'New blank page'}
      </h2>
      <div class="form-grid">
        <TextField label="Title" value={title} onValue={setTitle} required maxLength={120} />
        <TextField
          label="Slug"
          value={slug}
          onValue={setSlug}
          maxLength={64}
          hint="Lower-case letters, digits and hyphens; left empty, it is made from the title."
        />
      </div>
      {create.error != null && (
        <p class="field-error" role="alert">
          {explain(create.error)}
        </p>
      )}
      <div class="actions">
        <button type="submit" disabled={create.busy}>
          {create.busy ? 'Creating…' : 'Create page'}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  )
}
