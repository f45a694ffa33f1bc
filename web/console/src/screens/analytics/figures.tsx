// What both analytics screens show for a range: the range as the server understood it, the totals, the
// click timeline and where the clicks came from.
import type { ComponentChildren } from 'preact'
import { Empty, Loaded } from '../../ui/states'
import { useAsync } from '../../ui/async'
import { ClickChart } from './chart'
import { loadFigures, type Breakdown, type Figures, type Overview } from './data'
import { count, dimensionValue, money, when, type Dimension } from './format'
import { toQuery, type Range } from './range'

const DIMENSIONS: { key: Dimension; title: string }[] = [
  { key: 'countries', title: 'Countries' },
  { key: 'devices', title: 'Devices' },
  { key: 'browsers', title: 'Browsers' },
  { key: 'os', title: 'Operating systems' },
  { key: 'referrers', title: 'Referrers' },
]

/** Loads and shows a range's figures (one link's with `linkId`); `empty` is shown when nothing happened. */
export function RangeFigures({
  range,
  linkId,
  empty,
  children,
}: {
  range: Range
  linkId?: string
  empty: (overview: Overview) => ComponentChildren
  /** What follows the figures; a function is given them (and called again with each new answer). */
  children?: ComponentChildren | ((figures: Figures) => ComponentChildren)
}) {
  // The query is computed at each load, so "Refresh" on a 24-hour range moves it up to now.
  const state = useAsync(() => loadFigures(toQuery(range), linkId), [range.preset, range.from, range.to, linkId])
  return (
    <div class="figures" aria-busy={state.status === 'loading'}>
      <Loaded state={state} label="Loading figures…">
        {(figures) => (
          <>
            <RangeLine figures={figures} reload={state.reload} busy={state.status === 'loading'} />
            <Totals overview={figures.overview} perLink={Boolean(linkId)} />
            {figures.overview.totals.clicks === 0 && figures.overview.totals.conversions === 0 ? (
              empty(figures.overview)
            ) : (
              <>
                <section aria-labelledby="clicks-over-time">
                  <h2 id="clicks-over-time">Clicks over time</h2>
                  <ClickChart buckets={figures.timeline.buckets} interval={figures.timeline.interval} />
                </section>
                <section aria-labelledby="where-from">
                  <h2 id="where-from">Where clicks come from</h2>
                  <div class="breakdowns">
                    {DIMENSIONS.map((d) => (
                      <BarList dimension={d.key} title={d.title} rows={figures.overview.top[d.key]} />
                    ))}
                  </div>
                </section>
              </>
            )}
            {typeof children === 'function' ? children(figures) : children}
          </>
        )}
      </Loaded>
    </div>
  )
}

function RangeLine({ figures, reload, busy }: { figures: Figures; reload: () => void; busy: boolean }) {
  const { from, to, tz } = figures.overview
  return (
    <div class="range-line">
      <p class="hint">
        From <time dateTime={from}>{when(from)}</time> to <time dateTime={to}>{when(to)}</time> ({tz}), per {figures.timeline.interval}.
      </p>
      <button type="button" class="secondary small" onClick={reload} disabled={busy}>
        Refresh
      </button>
    </div>
  )
}

function Totals({ overview, perLink }: { overview: Overview; perLink: boolean }) {
  const t = overview.totals
  const stats: [string, string][] = [
    ['Clicks', count(t.clicks)],
    ['Unique visitors', count(t.uniqueVisitors)],
    ['Conversions', count(t.conversions)],
    ['Revenue', money(t.revenue)],
  ]
  if (!perLink) stats.push(['Links', count(t.links)])
  return (
    <>
      <dl class="cards totals">
        {stats.map(([label, value]) => (
          <div class="panel">
            <dt>{label}</dt>
            <dd class="stat">{value}</dd>
          </div>
        ))}
      </dl>
      {t.botHits > 0 && <p class="hint">Bots and link previews: {count(t.botHits)} hits, not counted as clicks.</p>}
    </>
  )
}

function BarList({ dimension, title, rows }: { dimension: Dimension; title: string; rows: Breakdown[] }) {
  const most = rows.reduce((m, r) => Math.max(m, r.clicks), 0)
  return (
    <section class="panel breakdown" aria-label={title}>
      <h3>{title}</h3>
      {rows.length ? (
        <ul class="bar-list">
          {rows.map((r) => (
            <li>
              <span
                class="bar"
                aria-hidden="true"
                ref={(el) => {
                  if (el) el.style.width = `${most ? (r.clicks / most) * 100 : 0}%`
                }}
              />
              <span>{dimensionValue(dimension, r.value)}</span>
              <span class="num">{count(r.clicks)}</span>
            </li>
          ))}
        </ul>
      ) : (
        <Empty>No clicks in this range.</Empty>
      )}
    </section>
  )
}
