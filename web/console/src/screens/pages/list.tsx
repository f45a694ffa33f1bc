// /pages: the workspace's bridge pages (newest first, paged) with their public addresses.
import { api } from '../../api'
import { href } from '../../router'
import { useSession } from '../../session'
import { useAsync } from '../../ui/async'
import { Pager } from '../../ui/pager'
import { Empty, Loaded } from '../../ui/states'
import type { ScreenProps } from '../types'

const PER_PAGE = 25

export function PageList({ query }: ScreenProps) {
  const { can } = useSession()
  const page = Math.max(1, Number(query.get('page')) || 1)
  const state = useAsync(() => api.page<'/bridge-pages'>('/bridge-pages', { page, perPage: PER_PAGE }), [page])
  return (
    <>
      <h1 tabIndex={-1}>Bridge pages</h1>
      <p class="hint">Small public pages (a link in bio, a release, a business card) built from blocks, served at /p/… on your short domains.</p>
      <div class="actions">
        <a class="button" href={href('/pages/templates')}>
          {can('pages:write') ? 'New page from a template' : 'Browse templates'}
        </a>
      </div>
      <Loaded state={state} label="Loading pages…">
        {({ data, pagination }) =>
          data.length === 0 ? (
            <Empty>No bridge pages yet.{can('pages:write') ? ' Start from a template.' : ''}</Empty>
          ) : (
            <>
              <div class="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Title</th>
                      <th scope="col" class="hide-narrow">
                        Slug
                      </th>
                      <th scope="col">Public address</th>
                      <th scope="col">Status</th>
                      <th scope="col" class="num hide-narrow">
                        Views
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.map((p) => (
                      <tr>
                        <td>
                          <a href={href(`/pages/${p.id}`)}>{p.title}</a>
                        </td>
                        <td class="hide-narrow">
                          <code>{p.slug}</code>
                        </td>
                        <td>
                          <a href={p.url} target="_blank" rel="noopener noreferrer">
                            {p.url.replace(/^https?:\/\//, '')}
                            <span class="visually-hidden"> (opens in a new tab)</span>
                          </a>
                        </td>
                        <td>{p.isTest ? <span class="badge test">Test page</span> : <span class="badge ok">Live</span>}</td>
                        <td class="num hide-narrow">{p.views}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              {pagination && (
                <Pager
                  page={pagination.page}
                  totalPages={pagination.totalPages}
                  total={pagination.total}
                  onPage={(n) => (location.hash = href('/pages', { page: n }).slice(1))}
                  label="Pages of bridge pages"
                />
              )}
            </>
          )
        }
      </Loaded>
    </>
  )
}
