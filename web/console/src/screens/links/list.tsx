// The links list: filters live in the hash query (#/links?search=x&tag=y&page=2), so a reload or a shared
// address shows the same list. The form changes the address; the address drives the request.
import { useEffect, useState } from 'preact/hooks'
import { api } from '../../api'
import { href, navigate } from '../../router'
import { useSession } from '../../session'
import { useAsync } from '../../ui/async'
import { CopyButton } from '../../ui/buttons'
import { SelectField, TextField } from '../../ui/form'
import { Pager } from '../../ui/pager'
import { Empty, Loaded } from '../../ui/states'
import type { ScreenProps } from '../types'
import type { Link } from './model'

const PER_PAGE = 25
const ARCHIVED = [
  { value: 'false', label: 'Not archived' },
  { value: 'true', label: 'Archived' },
  { value: 'all', label: 'All' },
]

interface Filters {
  search: string
  tag: string
  domain: string
  archived: string
}

const filtersOf = (query: URLSearchParams): Filters => ({
  search: query.get('search') ?? '',
  tag: query.get('tag') ?? '',
  domain: query.get('domain') ?? '',
  archived: query.get('archived') ?? 'false',
})

export function LinksList({ query }: ScreenProps) {
  const { can } = useSession()
  const applied = filtersOf(query)
  const page = Math.max(1, Number(query.get('page')) || 1)
  const [draft, setDraft] = useState(applied)
  const key = query.toString()
  useEffect(() => setDraft(filtersOf(query)), [key])

  const state = useAsync(
    () =>
      api.page<'/links'>('/links', {
        page,
        perPage: PER_PAGE,
        search: applied.search,
        tag: applied.tag,
        domain: applied.domain,
        // The address's text, as the server reads it (it refuses anything but true or false).
        archived: applied.archived === 'all' ? undefined : (applied.archived as 'true' | 'false'),
      }),
    [key],
  )
  const go = (filters: Filters, toPage = 1) =>
    navigate('/links', { ...filters, archived: filters.archived === 'false' ? undefined : filters.archived, page: toPage > 1 ? toPage : undefined })
  const filtered = Boolean(applied.search || applied.tag || applied.domain || applied.archived !== 'false')

  return (
    <>
      <h1 tabIndex={-1}>Links</h1>
      {can('links:write') && (
        <div class="actions">
          <a class="button" href={href('/links/new')}>
            New link
          </a>
          <a class="button secondary" href={href('/links/bulk')}>
            Bulk create
          </a>
        </div>
      )}
      <form
        class="toolbar"
        role="search"
        aria-label="Filter links"
        onSubmit={(e) => {
          e.preventDefault()
          go(draft)
        }}
      >
        <TextField
          label="Search"
          type="search"
          value={draft.search}
          onValue={(search) => setDraft({ ...draft, search })}
          hint="Slug, title, destination or tag"
        />
        <TextField label="Tag" value={draft.tag} onValue={(tag) => setDraft({ ...draft, tag })} />
        <TextField label="Domain" value={draft.domain} onValue={(domain) => setDraft({ ...draft, domain })} />
        <SelectField label="Archived" value={draft.archived} onValue={(archived) => setDraft({ ...draft, archived })} options={ARCHIVED} />
        <div class="actions">
          <button type="submit">Apply filters</button>
          {filtered && (
            <button type="button" class="secondary" onClick={() => go({ search: '', tag: '', domain: '', archived: 'false' })}>
              Clear filters
            </button>
          )}
        </div>
      </form>
      <Loaded state={state} label="Loading links…">
        {(result) =>
          result.data.length === 0 ? (
            <Empty>{filtered ? 'No link matches these filters.' : 'No links yet.'}</Empty>
          ) : (
            <>
              <LinksTable links={result.data} canWrite={can('links:write')} />
              <Pager
                page={result.pagination?.page ?? page}
                totalPages={result.pagination?.totalPages ?? 1}
                total={result.pagination?.total ?? result.data.length}
                onPage={(p) => go(applied, p)}
                label="Pages of links"
              />
            </>
          )
        }
      </Loaded>
    </>
  )
}

function LinksTable({ links, canWrite }: { links: Link[]; canWrite: boolean }) {
  const open = canWrite ? 'Edit' : 'Details'
  return (
    <div class="table-wrap">
      <table class="links-table">
        <caption class="visually-hidden">Links, newest first</caption>
        <thead>
          <tr>
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
