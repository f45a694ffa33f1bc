// /webhooks: the workspace's endpoints with their state, events, format and latest delivery.
import { api } from '../../api'
import { href } from '../../router'
import { useSession } from '../../session'
import { Empty, Loaded } from '../../ui/states'
import { useAsync } from '../../ui/async'
import { Badge, DeliveryBadge } from './badges'
import { endpointPath, endpointState, STATE_BADGE, STATE_LABEL, when, type Endpoint } from './model'

export function EndpointsScreen() {
  const { can } = useSession()
  const endpoints = useAsync(() => api.get<'/webhooks'>('/webhooks'), [])
  return (
    <>
      <h1 tabIndex={-1}>Webhooks</h1>
      <p class="hint">lnk sends signed POST requests to these URLs when events happen, retries failures and keeps every attempt.</p>
      {can('webhooks:write') && (
        <div class="actions">
          <a class="button" href={href('/webhooks/new')}>
            New endpoint
          </a>
        </div>
      )}
      <Loaded state={endpoints} label="Loading endpoints…">
        {(list) =>
          list.length === 0 ? (
            <Empty>No webhook endpoints yet.{can('webhooks:write') ? ' Create one to receive events.' : ''}</Empty>
          ) : (
            <div class="table-wrap">
              <table>
                <caption class="visually-hidden">Webhook endpoints</caption>
                <thead>
                  <tr>
                    <th scope="col">Endpoint</th>
                    <th scope="col">Status</th>
                    <th scope="col" class="hide-narrow">
                      Events
                    </th>
                    <th scope="col" class="hide-narrow">
                      Format
                    </th>
                    <th scope="col">Last delivery</th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((e) => (
                    <EndpointRow key={e.id} endpoint={e} />
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Loaded>
    </>
  )
}

function EndpointRow({ endpoint: e }: { endpoint: Endpoint }) {
  const state = endpointState(e)
  return (
    <tr>
      <td class="wh-url">
        <a href={href(endpointPath(e.id))}>{e.name || e.url}</a>
        {e.name && <div class="hint wh-break">{e.url}</div>}
        {e.mode === 'test' && <Badge kind="test">test</Badge>}
      </td>
      <td>
        <Badge kind={STATE_BADGE[state]}>{STATE_LABEL[state]}</Badge>
        {e.failureCount > 0 && <div class="hint">{e.failureCount} failed in a row</div>}
      </td>
      <td class="hide-narrow">
        <code>{e.events.join(', ')}</code>
      </td>
      <td class="hide-narrow">{e.format}</td>
      <td>
        <LastDelivery endpointId={e.id} />
      </td>
    </tr>
  )
}

/** The endpoint object has no delivery facts, so each row asks for its newest delivery. */
function LastDelivery({ endpointId }: { endpointId: string }) {
  const last = useAsync(() => api.get<'/webhooks/{id}/deliveries'>(`/webhooks/${encodeURIComponent(endpointId)}/deliveries`, { limit: 1 }), [endpointId])
  if (last.status === 'error') return <span class="hint">Not available</span>
  if (!last.data) return <span class="hint">…</span>
  const d = last.data[0]
  if (!d) return <span class="hint">None yet</span>
  return (
    <>
      <DeliveryBadge status={d.status} /> <span class="small-text">{d.event}</span>
      <div class="hint">{when(d.createdAt)}</div>
    </>
  )
}
