// Analytics screens: the workspace's figures (/analytics) and one link's (/analytics/links/:id), for a range
// kept in the hash query, read from GET /v1/analytics/overview, timeline and top-links; a link with routing
// rules or A/B variants also shows each one's clicks (breakdown by rule and by variant).
import 'uplot/dist/uPlot.min.css'
import './analytics.css'
import { api, explain } from '../../api'
import { href } from '../../router'
import { useSession } from '../../session'
import { useAsync } from '../../ui/async'
import { Empty } from '../../ui/states'
import type { ScreenProps, ScreenRoute } from '../types'
import { RangeFigures } from './figures'
import { RangeChooser } from './range-chooser'
import { rangeQuery, readRange } from './range'
import { RoutingPanels } from './routing'
import { readSort, TopLinksSection } from './top-links'

function NotAllowed() {
  return (
    <>
      <h1 tabIndex={-1}>Analytics</h1>
      <p class="state error" role="alert">
        This API key cannot read analytics: it does not have the <code>analytics:read</code> permission. Sign in with a key that has it, or ask a workspace
        owner to give you one.
      </p>
    </>
  )
}

function WorkspaceAnalytics({ query }: ScreenProps) {
  const { can } = useSession()
  if (!can('analytics:read')) return <NotAllowed />
  const range = readRange(query)
  const sort = readSort(query)
  return (
    <>
      <h1 tabIndex={-1}>Analytics</h1>
      <RangeChooser key={JSON.stringify(range)} path="/analytics" range={range} keep={{ sort: query.get('sort') ?? undefined }} />
      <RangeFigures
        range={range}
        empty={(overview) =>
          overview.totals.links === 0 ? (
            <Empty>This workspace has no links yet, so there is nothing to count. {can('links:write') && <a href={href('/links/new')}>Create a link</a>}</Empty>
          ) : (
            <Empty>No clicks or conversions in this range. Choose a longer range, or share a short link and visits will show here.</Empty>
          )
        }
      >
        <TopLinksSection range={range} sort={sort} />
      </RangeFigures>
    </>
  )
}

function LinkAnalytics({ params, query }: ScreenProps) {
  const { can } = useSession()
  const id = params.id!
  const link = useAsync(() => api.get<'/links/{id}'>(`/links/${encodeURIComponent(id)}`), [id])
  if (!can('analytics:read')) return <NotAllowed />
  const range = readRange(query)
  const name = link.data ? link.data.title || link.data.shortUrl : `Link ${id}`
  return (
    <>
      <p class="back">
        <a href={href('/analytics', rangeQuery(range))}>← All analytics</a>
      </p>
      <h1 tabIndex={-1}>Analytics: {name}</h1>
      {link.data && (
        <p class="link-facts">
          <a href={link.data.shortUrl}>{link.data.shortUrl}</a> <span class="hint">→ {link.data.destinationUrl}</span>{' '}
          {can('links:read') && <a href={href(`/links/${encodeURIComponent(id)}`)}>Link settings</a>}
        </p>
      )}
      {link.status === 'error' && <p class="hint">The link's details could not be read: {explain(link.error)}</p>}
      <RangeChooser key={JSON.stringify(range)} path={`/analytics/links/${encodeURIComponent(id)}`} range={range} />
      <RangeFigures range={range} linkId={id} empty={() => <Empty>No clicks or conversions of this link in this range.</Empty>}>
        {(figures) => link.data && <RoutingPanels link={link.data} range={range} figures={figures} />}
      </RangeFigures>
    </>
  )
}

export const routes: ScreenRoute[] = [
  { path: '/analytics', component: WorkspaceAnalytics, nav: { label: 'Analytics', permission: 'analytics:read' } },
  { path: '/analytics/links/:id', component: LinkAnalytics },
]
