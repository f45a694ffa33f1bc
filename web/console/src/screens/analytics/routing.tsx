// A link's routing on its analytics screen: for each A/B variant its destination, its share of visitors (its
// weight over the sum) and the clicks and visitors it got in the range; for each routing rule the same
// figures. Read from GET /v1/analytics/breakdown by variant and by rule: exact, over the clicks the server
// still keeps (LNK_CLICK_RETENTION_DAYS).
import type { Data, Schema } from '../../api-types'
import { useAsync } from '../../ui/async'
import { Loaded } from '../../ui/states'
import { type BreakdownAnswer, type BreakdownDimension, type Figures, loadBreakdown } from './data'
import { count } from './format'
import { toQuery, type Range } from './range'

type Link = Data<'/links/{id}', 'get'>

const percent = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 1 })

/** A variant's name on screen: A, B, C… in the order the link lists them. */
const letter = (i: number) => String.fromCharCode(65 + i)

interface Row {
  id: string
  name: string
  destinationUrl: string
  share?: string
}

/** The panels a link's routing calls for (none for a link without rules or variants). */
export function RoutingPanels({ link, range, figures }: { link: Link; range: Range; figures: Figures }) {
  const variants: Schema<'Variant'>[] = link.variants ?? []
  const rules: Schema<'RoutingRule'>[] = link.routingRules ?? []
  const weights = variants.reduce((n, v) => n + v.weight, 0)
  return (
    <>
      {variants.length > 0 && (
        <RoutePanel
          id="variants"
          title="Variants"
          dimension="variant"
          link={link}
          range={range}
          figures={figures}
          rows={variants.map((v, i) => ({
            id: v.id,
            name: `Variant ${letter(i)}`,
            destinationUrl: v.destinationUrl,
            share: percent.format(v.weight / weights),
          }))}
          others={(n) =>
            `${count(n)} ${n === 1 ? 'click' : 'clicks'} in this range went elsewhere: ` +
            'a routing rule chose the destination, or the visit came before these variants.'
          }
        />
      )}
      {rules.length > 0 && (
        <RoutePanel
          id="rules"
          title="Rules"
          dimension="rule"
          link={link}
          range={range}
          figures={figures}
          rows={rules.map((r, i) => ({ id: r.id, name: r.name || `Rule ${i + 1}`, destinationUrl: r.destinationUrl }))}
          others={(n) => `${count(n)} ${n === 1 ? 'click' : 'clicks'} in this range matched no rule.`}
        />
      )}
    </>
  )
}

function RoutePanel(props: {
  id: string
  title: string
  dimension: BreakdownDimension
  link: Link
  range: Range
  /** The screen's figures: a new answer (Refresh, another range) reloads the panel with them. */
  figures: Figures
  rows: Row[]
  others: (clicks: number) => string
}) {
  const { id, title, dimension, link, range, figures, rows } = props
  // Every value, not just the listed ones: variants removed since keep their ids on older clicks, and may
  // outrank today's. A link has at most a few dozen such ids.
  const state = useAsync(() => loadBreakdown(toQuery(range), link.id, dimension, 1000), [figures, link.id, dimension])
  const withShare = rows.some((r) => r.share !== undefined)
  return (
    <section class="panel route-panel" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{title}</h2>
      <Loaded state={state} label={`Loading ${title.toLowerCase()}…`}>
        {(answer) => {
          const of = figuresById(answer)
          const listed = rows.reduce((n, r) => n + (of.get(r.id)?.clicks ?? 0), 0)
          const others = answer.totals.clicks - listed
          return (
            <>
              {/* Focusable: on a phone the table scrolls sideways, and keyboard users must reach it too. */}
              <div class="table-wrap" tabIndex={0} role="region" aria-label={`${title}: clicks and unique visitors`}>
                <table>
                  <caption class="visually-hidden">{title}: clicks and unique visitors in the range</caption>
                  <thead>
                    <tr>
                      <th scope="col">{dimension === 'variant' ? 'Variant' : 'Rule'}</th>
                      <th scope="col">Destination</th>
                      {withShare && (
                        <th scope="col" class="num">
                          Share
                        </th>
                      )}
                      <th scope="col" class="num">
                        Clicks
                      </th>
                      <th scope="col" class="num">
                        Unique visitors
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((r) => (
                      <tr data-id={r.id}>
                        <th scope="row">{r.name}</th>
                        <td class="link-cell">{r.destinationUrl}</td>
                        {withShare && <td class="num">{r.share}</td>}
                        <td class="num">{count(of.get(r.id)?.clicks ?? 0)}</td>
                        <td class="num">{count(of.get(r.id)?.uniqueClicks ?? 0)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              {others > 0 && <p class="hint">{props.others(others)}</p>}
            </>
          )
        }}
      </Loaded>
    </section>
  )
}

function figuresById(answer: BreakdownAnswer) {
  const of = new Map<string, BreakdownAnswer['rows'][number]>()
  for (const r of answer.rows) if (r.value !== null) of.set(r.value, r)
  return of
}
