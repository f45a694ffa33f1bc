// The workspace's best links of a range, ranked by what the person chooses (clicks, visitors, conversions or
// revenue); each row leads to the link's own analytics and to its settings.
import { href, navigate } from '../../router'
import { SelectField } from '../../ui/form'
import { Empty, Loaded } from '../../ui/states'
import { useAsync } from '../../ui/async'
import { loadTopLinks, type Sort } from './data'
import { count, money } from './format'
import { rangeQuery, toQuery, type Range } from './range'

const SORTS: { value: Sort; label: string }[] = [
  { value: 'clicks', label: 'Clicks' },
  { value: 'uniqueClicks', label: 'Unique visitors' },
  { value: 'conversions', label: 'Conversions' },
  { value: 'revenue', label: 'Revenue' },
]

export const readSort = (query: URLSearchParams): Sort => SORTS.find((s) => s.value === query.get('sort'))?.value ?? 'clicks'

export function TopLinksSection({ range, sort }: { range: Range; sort: Sort }) {
  const state = useAsync(() => loadTopLinks(toQuery(range), sort), [range.preset, range.from, range.to, sort])
  const back = rangeQuery(range)
  return (
    <section aria-labelledby="top-links">
      <h2 id="top-links">Top links</h2>
      <div class="toolbar">
        <SelectField
          label="Rank by"
          value={sort}
          options={SORTS}
          onValue={(value) => navigate('/analytics', rangeQuery(range, { sort: value === 'clicks' ? undefined : value }))}
        />
      </div>
      <Loaded state={state} label="Loading top links…">
        {(top) =>
          top.links.length ? (
            <div class="table-wrap">
              <table>
                <caption class="visually-hidden">Top links by {SORTS.find((s) => s.value === top.sort)?.label.toLowerCase()}</caption>
                <thead>
                  <tr>
                    <th scope="col">Link</th>
                    <th scope="col" class="num">
                      Clicks
                    </th>
                    <th scope="col" class="num hide-narrow">
                      Unique visitors
                    </th>
                    <th scope="col" class="num">
                      Conversions
                    </th>
                    <th scope="col" class="num hide-narrow">
                      Revenue
                    </th>
                    <th scope="col" class="hide-narrow">
                      <span class="visually-hidden">Settings</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {top.links.map((l) => (
                    <tr>
                      <td class="link-cell">
                        <a href={href(`/analytics/links/${encodeURIComponent(l.id)}`, back)}>{l.title || l.shortUrl}</a>
                        {l.title && <div class="hint">{l.shortUrl}</div>}
                      </td>
                      <td class="num">{count(l.clicks)}</td>
                      <td class="num hide-narrow">{count(l.uniqueClicks)}</td>
                      <td class="num">{count(l.conversions)}</td>
                      <td class="num hide-narrow">{Object.keys(l.revenue).length ? money(l.revenue) : '–'}</td>
                      <td class="hide-narrow">
                        <a href={href(`/links/${encodeURIComponent(l.id)}`)} aria-label={`Settings of ${l.shortUrl}`}>
                          Settings
                        </a>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : (
            <Empty>No link had clicks or conversions in this range.</Empty>
          )
        }
      </Loaded>
    </section>
  )
}
