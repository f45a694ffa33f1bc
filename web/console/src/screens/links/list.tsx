// The links list: filters, the folder and the order live in the hash query (#/links?search=x&folderId=fld_1&sort=title),
// so a reload or a shared address shows the same list. The form changes the address; the address drives the
// request. Pages follow by cursor ("Load more"); ticked links can be tagged, moved, archived or deleted at once.
import { useEffect, useState } from 'preact/hooks'
import { api } from '../../api'
import { href, navigate } from '../../router'
import { useSession } from '../../session'
import { useAsync } from '../../ui/async'
import { CopyButton } from '../../ui/buttons'
import { SelectField, TextField } from '../../ui/form'
import { Empty, ErrorNotice, Loaded } from '../../ui/states'
import '../organisation.css'
import type { ScreenProps } from '../types'
import { FolderNav } from './folder-nav'
import { addressOf, DEFAULTS, type Filters, filtersOf, isFiltered, SORTS, useCursorList } from './list-query'
import type { Link } from './model'
import { OutcomeNotice, type Outcome, SelectionBar } from './selection'

const ARCHIVED = [
  { value: 'false', label: 'Not archived' },
  { value: 'true', label: 'Archived' },
  { value: 'all', label: 'All' },
]
const ACTIVE = [
  { value: 'all', label: 'All' },
  { value: 'true', label: 'Active' },
  { value: 'false', label: 'Inactive' },
]
const TEST = [
  { value: 'all', label: 'All' },
  { value: 'false', label: 'Live links' },
  { value: 'true', label: 'Test links' },
]
const ORDER = [
  { value: 'desc', label: 'Descending' },
  { value: 'asc', label: 'Ascending' },
]

export function LinksList({ query }: ScreenProps) {
  const { can } = useSession()
  const canWrite = can('links:write')
  const applied = filtersOf(query)
  const [draft, setDraft] = useState(applied)
  const key = query.toString()
  useEffect(() => setDraft(filtersOf(query)), [key])
  const list = useCursorList(applied, key)
  const folders = useAsync(() => api.get<'/folders'>('/folders'), [])
  const [picked, setPicked] = useState<Set<string>>(new Set())
  const [outcome, setOutcome] = useState<Outcome | null>(null)
  // Another address is another list: what was ticked or done on the old one no longer applies.
  useEffect(() => {
    setPicked(new Set())
    setOutcome(null)
  }, [key])

  const go = (filters: Filters) => navigate('/links', addressOf(filters))
  const set =
    <K extends keyof Filters>(name: K) =>
    (value: string) =>
      setDraft({ ...draft, [name]: value as Filters[K] })
  const filtered = isFiltered(applied)
  const selected = list.links.filter((l) => picked.has(l.id))
  const toggle = (id: string, on: boolean) => {
    const next = new Set(picked)
    if (on) next.add(id)
    else next.delete(id)
    setPicked(next)
  }
  const folderName = folders.data?.find((f) => f.id === applied.folderId)?.name

  return (
    <>
      <h1 tabIndex={-1}>{folderName ? `Links in ${folderName}` : 'Links'}</h1>
      {canWrite && (
        <div class="actions">
          <a class="button" href={href('/links/new')}>
            New link
          </a>
          <a class="button secondary" href={href('/links/bulk')}>
            Bulk create
          </a>
        </div>
      )}
      <div class="links-layout">
        <FolderNav folders={folders} filters={applied} />
        <div>
          <form
            class="toolbar"
            role="search"
            aria-label="Filter links"
            onSubmit={(e) => {
              e.preventDefault()
              go(draft)
            }}
          >
            <TextField label="Search" type="search" value={draft.search} onValue={set('search')} hint="Slug, title, destination or tag" />
            <TextField label="Tag" value={draft.tag} onValue={set('tag')} />
            <TextField label="Domain" value={draft.domain} onValue={set('domain')} />
            <SelectField label="Archived" value={draft.archived} onValue={set('archived')} options={ARCHIVED} />
            <SelectField label="Active" value={draft.active} onValue={set('active')} options={ACTIVE} />
            <SelectField label="Test" value={draft.test} onValue={set('test')} options={TEST} />
            <SelectField label="Sort by" value={draft.sort} onValue={set('sort')} options={SORTS} />
            <SelectField label="Order" value={draft.order} onValue={set('order')} options={ORDER} />
            <div class="actions">
              <button type="submit">Apply filters</button>
              {filtered && (
                <button
                  type="button"
                  class="secondary"
                  onClick={() => go({ ...DEFAULTS, folderId: applied.folderId, sort: applied.sort, order: applied.order })}
                >
                  Clear filters
                </button>
              )}
            </div>
          </form>
          {outcome && <OutcomeNotice outcome={outcome} />}
          {canWrite && selected.length > 0 && (
            <SelectionBar
              selected={selected}
              folders={folders.data ?? []}
              onClear={() => setPicked(new Set())}
              onDone={(done) => {
                setOutcome(done)
                // The selection stays for the next action; links that leave the list (deleted, or archived while
                // archived ones are hidden) leave it with them, as it only counts the rows shown.
                list.first.reload()
                folders.reload()
              }}
            />
          )}
          <Loaded state={list.first} label="Loading links…">
            {() =>
              list.links.length === 0 ? (
                <Empty>{filtered ? 'No link matches these filters.' : 'No links yet.'}</Empty>
              ) : (
                <>
                  <LinksTable
                    links={list.links}
                    canWrite={canWrite}
                    picked={picked}
                    onPick={toggle}
                    onPickAll={(on) => setPicked(on ? new Set(list.links.map((l) => l.id)) : new Set())}
                    caption={
                      `Links by ${SORTS.find((s) => s.value === applied.sort)?.label.toLowerCase()}, ` +
                      `${applied.order === 'asc' ? 'ascending' : 'descending'}`
                    }
                  />
                  <div class="actions">
                    <p class="hint">
                      Showing {list.links.length.toLocaleString()}
                      {list.total !== undefined ? ` of ${list.total.toLocaleString()}` : ''}
                    </p>
                    {list.nextCursor && (
                      <button type="button" class="secondary" disabled={list.loadingMore} onClick={() => void list.loadMore()}>
                        {list.loadingMore ? 'Loading…' : 'Load more'}
                      </button>
                    )}
                  </div>
                  {list.moreError !== null && <ErrorNotice error={list.moreError} retry={() => void list.loadMore()} />}
                </>
              )
            }
          </Loaded>
        </div>
      </div>
    </>
  )
}

function LinksTable({
  links,
  canWrite,
  picked,
  onPick,
  onPickAll,
  caption,
}: {
  links: Link[]
  canWrite: boolean
  picked: Set<string>
  onPick: (id: string, on: boolean) => void
  onPickAll: (on: boolean) => void
  caption: string
}) {
  const open = canWrite ? 'Edit' : 'Details'
  return (
    <div class="table-wrap">
      <table class="links-table">
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {canWrite && (
              <th scope="col" class="pick">
                <input
                  type="checkbox"
                  aria-label="Select all links shown"
                  checked={links.length > 0 && links.every((l) => picked.has(l.id))}
                  onChange={(e) => onPickAll(e.currentTarget.checked)}
                />
              </th>
            )}
            <th scope="col">Link</th>
            <th scope="col" class="num">
              Clicks
            </th>
            <th scope="col">Tags</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {links.map((link) => (
            <tr key={link.id}>
              {canWrite && (
                <td class="pick">
                  <input
                    type="checkbox"
                    aria-label={`Select ${link.slug}`}
                    checked={picked.has(link.id)}
                    onChange={(e) => onPick(link.id, e.currentTarget.checked)}
                  />
                </td>
              )}
              <td>
                <div class="short-url">
                  <a href={href(`/links/${encodeURIComponent(link.id)}`)}>{link.shortUrl.replace(/^https?:\/\//, '')}</a> <CopyButton text={link.shortUrl} />
                </div>
                {link.title && <div>{link.title}</div>}
                <div class="destination small-text">{link.destinationUrl}</div>
                <div class="badges">
                  {link.hasPassword && <span class="badge muted">Password</span>}
                  {!link.isActive && <span class="badge bad">Inactive</span>}
                  {link.isArchived && <span class="badge muted">Archived</span>}
                  {link.isTest && <span class="badge test">Test</span>}
                </div>
              </td>
              <td class="num">{link.totalClicks.toLocaleString()}</td>
              <td>
                {link.tags.map((tag) => (
                  <a class="tag" href={href('/links', { tag })}>
                    {tag}
                  </a>
                ))}
              </td>
              <td>
                <div class="row-actions">
                  <a href={href(`/links/${encodeURIComponent(link.id)}`)} aria-label={`${open} ${link.slug}`}>
                    {open}
                  </a>
                  <a href={href(`/analytics/links/${encodeURIComponent(link.id)}`)} aria-label={`Analytics of ${link.slug}`}>
                    Analytics
                  </a>
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
