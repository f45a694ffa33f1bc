// /webhooks/:id/deliveries/:deliveryId: one delivery as it was sent and answered (the last attempt's exact
// request and response), every attempt, the payload, and replay.
import { api, explain } from '../../api'
import { href, navigate } from '../../router'
import { useSession } from '../../session'
import { announce } from '../../ui/announce'
import { useAction, useAsync } from '../../ui/async'
import { Loaded } from '../../ui/states'
import type { ScreenProps } from '../types'
import { DeliveryBadge } from './badges'
import { deliveryPath, endpointPath, when, type DeliveryDetail } from './model'

export function DeliveryScreen({ params }: ScreenProps) {
  const endpointId = params.id!
  const deliveryId = params.deliveryId!
  const delivery = useAsync(
    () => api.get<'/webhooks/{id}/deliveries/{deliveryId}'>(`/webhooks/${encodeURIComponent(endpointId)}/deliveries/${encodeURIComponent(deliveryId)}`),
    [endpointId, deliveryId],
  )
  return (
    <>
      <p class="crumbs">
        <a href={href('/webhooks')}>Webhooks</a> / <a href={href(endpointPath(endpointId))}>Endpoint</a>
      </p>
      {delivery.data === undefined && <h1 tabIndex={-1}>Delivery</h1>}
      <Loaded state={delivery} label="Loading the delivery…">
        {(d) => <DeliveryView delivery={d} reload={delivery.reload} />}
      </Loaded>
    </>
  )
}

function DeliveryView({ delivery: d, reload }: { delivery: DeliveryDetail; reload: () => void }) {
  const { can } = useSession()
  const replay = useAction(async () => {
    const made = await api.post<'/webhooks/{id}/deliveries/{deliveryId}/replay'>(
      `/webhooks/${encodeURIComponent(d.endpointId)}/deliveries/${encodeURIComponent(d.id)}/replay`,
    )
    announce('Replay queued')
    navigate(deliveryPath(d.endpointId, made.id))
  })
  return (
    <>
      <h1 tabIndex={-1}>Delivery: {d.event}</h1>
      <div class="actions">
        <DeliveryBadge status={d.status} />
        {d.responseStatus !== null && <span>HTTP {d.responseStatus}</span>}
        <button type="button" class="secondary small" onClick={reload}>
          Refresh
        </button>
        {can('webhooks:write') && d.replayable && (
          <button type="button" disabled={replay.busy} onClick={() => void replay.run()}>
            Replay
          </button>
        )}
      </div>
      {replay.error ? (
        <p class="field-error" role="alert">
          {explain(replay.error)}
        </p>
      ) : null}
      <dl class="wh-facts">
        <dt>Delivery</dt>
        <dd>
          <code>{d.id}</code>
        </dd>
        <dt>webhook-id</dt>
        <dd>
          <code>{d.idempotencyKey}</code>
        </dd>
        {d.eventId && (
          <>
            <dt>Event</dt>
            <dd>
              <code>{d.eventId}</code>
            </dd>
          </>
        )}
        <dt>Attempts</dt>
        <dd>
          {d.attempt} of {d.maxAttempts}
        </dd>
        {d.nextAttemptAt && d.status !== 'success' && (
          <>
            <dt>Next attempt</dt>
            <dd>{when(d.nextAttemptAt)}</dd>
          </>
        )}
        {d.deliveredAt && (
          <>
            <dt>Delivered</dt>
            <dd>{when(d.deliveredAt)}</dd>
          </>
        )}
        {d.errorMessage && (
          <>
            <dt>Error</dt>
            <dd>{d.errorMessage}</dd>
          </>
        )}
        {d.replayOfId && (
          <>
            <dt>Replay of</dt>
            <dd>
              <a href={href(deliveryPath(d.endpointId, d.replayOfId))}>{d.replayOfId}</a>
            </dd>
          </>
        )}
        <dt>Created</dt>
        <dd>{when(d.createdAt)}</dd>
      </dl>

      <section aria-labelledby="wh-request">
        <h2 id="wh-request">Request</h2>
        {d.request ? (
          <>
            <p>
              <code>
                {d.request.method} {d.request.url}
              </code>
            </p>
            <Headers title="Request headers" headers={d.request.headers} />
            <Body label="Request body" text={d.request.body} />
          </>
        ) : (
          <p class="state empty">Not sent yet.</p>
        )}
      </section>

      <section aria-labelledby="wh-response">
        <h2 id="wh-response">Response</h2>
        {d.response ? (
          <>
            <p>Status {d.response.status ?? 'none'}</p>
            <Headers title="Response headers" headers={d.response.headers} />
            <Body label="Response body" text={d.response.body} />
            {d.response.bodyTruncated && <p class="hint">Only the first 16 KiB of the body are kept.</p>}
          </>
        ) : (
          <p class="state empty">No response{d.errorMessage ? `: ${d.errorMessage}` : '.'}</p>
        )}
      </section>

      <section aria-labelledby="wh-attempts">
        <h2 id="wh-attempts">Attempts</h2>
        {d.attempts.length === 0 ? (
          <p class="state empty">No attempts yet.</p>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col" class="num">
                    #
                  </th>
                  <th scope="col">Started</th>
                  <th scope="col" class="num">
                    Status
                  </th>
                  <th scope="col" class="num hide-narrow">
                    ms
                  </th>
                  <th scope="col" class="hide-narrow">
                    Address
                  </th>
                  <th scope="col">Error</th>
                </tr>
              </thead>
              <tbody>
                {d.attempts.map((a) => (
                  <tr key={a.attempt}>
                    <td class="num">{a.attempt}</td>
                    <td>{when(a.startedAt)}</td>
                    <td class="num">{a.responseStatus ?? '—'}</td>
                    <td class="num hide-narrow">{a.duration ?? '—'}</td>
                    <td class="hide-narrow">{a.address ? <code>{a.address}</code> : '—'}</td>
                    <td>{a.errorMessage ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      {d.payload && (
        <section aria-labelledby="wh-payload">
          <h2 id="wh-payload">Payload</h2>
          <p class="hint">The event before any template or format.</p>
          <Body label="Payload" text={JSON.stringify(d.payload)} />
        </section>
      )}
    </>
  )
}

function Headers({ title, headers }: { title: string; headers: Record<string, string> }) {
  const entries = Object.entries(headers)
  if (!entries.length) return <p class="hint">No headers.</p>
  return (
    <div class="table-wrap">
      <table class="wh-headers">
        <caption class="visually-hidden">{title}</caption>
        <thead>
          <tr>
            <th scope="col">Header</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <tbody>
          {entries.map(([name, value]) => (
            <tr key={name}>
              <td>
                <code>{name}</code>
              </td>
              <td>
                <code>{value}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

/** A body as sent: pretty-printed when it is JSON, as is otherwise. */
function Body({ label, text }: { label: string; text: string }) {
  let shown = text
  try {
    shown = JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    // Not JSON: shown as is.
  }
  return (
    <pre class="wh-body" tabIndex={0} aria-label={label}>
      {shown || '(empty)'}
    </pre>
  )
}
