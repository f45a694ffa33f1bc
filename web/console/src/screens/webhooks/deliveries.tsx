// An endpoint's deliveries, newest first: a status filter and page size kept in the address, older pages
// through the API's `to` cursor, and replay-all for the dead ones.
import { useState } from 'preact/hooks'
import { api, explain } from '../../api'
import { href, navigate, useRoute } from '../../router'
import { useSession } from '../../session'
import { useAction, useAsync } from '../../ui/async'
import { SelectField } from '../../ui/form'
import { Empty, Loaded } from '../../ui/states'
import { DeliveryBadge } from './badges'
import { deliveryPath, endpointPath, when, type Endpoint, type ReplayAllResult } from './model'

const STATUSES = ['all', 'pending', 'success', 'failed', 'dead'] as const
const LIMITS = ['10', '25', '50', '100', '200']

export function DeliveriesSection({ endpoint: e, version }: { endpoint: Endpoint; version: number }) {
  const { can } = useSession()
  const { query } = useRoute()
  const status = STATUSES.find((s) => s === query.get('status')) ?? 'all'
  // One of LIMITS, all whole numbers.
  const limit = (LIMITS.includes(query.get('limit') ?? '') ? query.get('limit')! : '25') as `${number}`
  // Each older page starts before the oldest delivery of the page before it.
  const [cursors, setCursors] = useState<string[]>([])
  const to = cursors[cursors.length - 1]
  const [replayed, setReplayed] = useState(0)
  const deliveries = useAsync(
    () => api.get<'/webhooks/{id}/deliveries'>(`/webhooks/${encodeURIComponent(e.id)}/deliveries`, { status, limit, to }),
    [e.id, status, limit, to, version, replayed],
  )
  const setFilter = (next: { status?: string; limit?: string }) => {
    setCursors([])
    navigate(endpointPath(e.id), { status: next.status ?? status, limit: next.limit ?? limit })
  }
  const rows = deliveries.data ?? []
  return (
    <section aria-labelledby="wh-deliveries">
      <h2 id="wh-deliveries">Deliveries</h2>
      <div class="toolbar">
        <SelectField
          label="Status"
          value={status}
          onValue={(v) => setFilter({ status: v })}
          options={STATUSES.map((s) => ({ value: s, label: s === 'failed' ? 'failed (retrying or dead)' : s }))}
        />
        <SelectField label="Per page" value={limit} onValue={(v) => setFilter({ limit: v })} options={LIMITS} />
        <button type="button" class="secondary" onClick={deliveries.reload}>
          Refresh
        </button>
      </div>
      {can('webhooks:write') && <ReplayAll endpoint={e} onQueued={() => setReplayed((n) => n + 1)} />}
      <Loaded state={deliveries} label="Loading deliveries…">
        {(list) =>
          list.length === 0 ? (
            <Empty>{cursors.length ? 'No older deliveries.' : status === 'all' ? 'No deliveries yet.' : `No ${status} deliveries.`}</Empty>
          ) : (
            <div class="table-wrap">
              <table>
                <caption class="visually-hidden">Deliveries, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Event</th>
                    <th scope="col">Status</th>
                    <th scope="col" class="num">
                      Response
                    </th>
                    <th scope="col" class="num hide-narrow">
                      Attempts
                    </th>
                    <th scope="col" class="hide-narrow">
                      Created
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((d) => (
                    <tr key={d.id}>
                      <td>
                        <a href={href(deliveryPath(e.id, d.id))}>{d.event}</a>
                        {d.batchSize > 1 && <span class="hint"> ({d.batchSize} events)</span>}
                        <div class="hint wh-break">{d.id}</div>
                      </td>
                      <td>
                        <DeliveryBadge status={d.status} />
                        {d.nextAttemptAt && d.status !== 'success' && <div class="hint">next {when(d.nextAttemptAt)}</div>}
                      </td>
                      <td class="num">{d.responseStatus ?? '—'}</td>
                      <td class="num hide-narrow">
                        {d.attempt}/{d.maxAttempts}
                      </td>
                      <td class="hide-narrow">{when(d.createdAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Loaded>
      <nav class="actions" aria-label="Delivery pages">
        {cursors.length > 0 && (
          <>
            <button type="button" class="secondary small" onClick={() => setCursors([])}>
              Newest
            </button>
            <button type="button" class="secondary small" onClick={() => setCursors((c) => c.slice(0, -1))}>
              Newer
            </button>
          </>
        )}
        {rows.length >= Number(limit) && (
          <button type="button" class="secondary small" onClick={() => setCursors((c) => [...c, rows[rows.length - 1]!.createdAt])}>
            Older
          </button>
        )}
      </nav>
    </section>
  )
}

function ReplayAll({ endpoint: e, onQueued }: { endpoint: Endpoint; onQueued: () => void }) {
  const [result, setResult] = useState<ReplayAllResult | null>(null)
  const replay = useAction(async () => {
    setResult(null)
    const answer = await api.post<'/webhooks/{id}/replay-all'>(`/webhooks/${encodeURIComponent(e.id)}/replay-all`)
    setResult(answer)
    onQueued()
  })
  return (
    <div class="actions">
      <button type="button" class="secondary" disabled={replay.busy} onClick={() => void replay.run()}>
        Replay all dead
      </button>
      {replay.error ? (
        <p class="field-error" role="alert">
          {explain(replay.error)}
        </p>
      ) : null}
      <span role="status">
        {result &&
          `${result.queued === 1 ? '1 delivery' : `${result.queued} deliveries`} queued again; ${result.remainingDead} dead ${result.remainingDead === 1 ? 'remains' : 'remain'}.`}
      </span>
    </div>
  )
}
