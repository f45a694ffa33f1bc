// /webhooks/new and /webhooks/:id: create an endpoint (its secret shown once), or look after one: pause and
// resume, test ping, secret rotation, settings, deletion, and its deliveries.
import { useState } from 'preact/hooks'
import { api, explain } from '../../api'
import { href, navigate } from '../../router'
import { useSession } from '../../session'
import { announce } from '../../ui/announce'
import { useAction, useAsync } from '../../ui/async'
import { ConfirmButton } from '../../ui/buttons'
import { CheckboxField } from '../../ui/form'
import { SecretOnce } from '../../ui/secret'
import { ErrorNotice, Loaded } from '../../ui/states'
import type { ScreenProps } from '../types'
import { Badge, DeliveryBadge } from './badges'
import { DeliveriesSection } from './deliveries'
import { EndpointForm } from './form'
import { deliveryPath, endpointPath, endpointState, STATE_BADGE, STATE_LABEL, when, type DeliveryDetail, type Endpoint, type EndpointWithSecret } from './model'

export function NewEndpointScreen() {
  const { can } = useSession()
  const [created, setCreated] = useState<EndpointWithSecret | null>(null)
  return (
    <>
      <p class="crumbs">
        <a href={href('/webhooks')}>Webhooks</a>
      </p>
      <h1 tabIndex={-1}>New webhook endpoint</h1>
      {!can('webhooks:write') ? (
        <p class="state empty">This API key can read webhooks but not create them. Sign in with a key that has webhooks:write.</p>
      ) : created ? (
        <>
          <p>
            Endpoint <strong>{created.name || created.url}</strong> created.
          </p>
          <SecretOnce label="Signing secret" secret={created.secret} onDone={() => navigate(endpointPath(created.id))} />
        </>
      ) : (
        <EndpointForm endpoint={null} onCreated={setCreated} />
      )}
    </>
  )
}

export function EndpointScreen({ params }: ScreenProps) {
  const id = params.id!
  const endpoint = useAsync(() => api.get<'/webhooks/{id}'>(`/webhooks/${encodeURIComponent(id)}`), [id])
  return (
    <>
      <p class="crumbs">
        <a href={href('/webhooks')}>Webhooks</a>
      </p>
      {endpoint.data === undefined && <h1 tabIndex={-1}>Webhook endpoint</h1>}
      <Loaded state={endpoint} label="Loading the endpoint…">
        {(e) => <EndpointView endpoint={e} reload={endpoint.reload} />}
      </Loaded>
    </>
  )
}

function EndpointView({ endpoint: e, reload }: { endpoint: Endpoint; reload: () => void }) {
  const { can } = useSession()
  const write = can('webhooks:write')
  const state = endpointState(e)
  const [deliveriesVersion, setDeliveriesVersion] = useState(0)
  const refreshDeliveries = () => setDeliveriesVersion((v) => v + 1)
  return (
    <>
      <h1 tabIndex={-1} class="wh-break">
        {e.name || e.url}
      </h1>
      <div class="actions">
        <Badge kind={STATE_BADGE[state]}>{STATE_LABEL[state]}</Badge>
        {e.mode === 'test' && <Badge kind="test">test mode</Badge>}
        <span class="hint">{e.format} format</span>
      </div>
      {e.disabledReason && (
        <p class="state error">
          lnk disabled this endpoint: {e.disabledReason}. {write ? 'Resume it once the receiver works again; dead deliveries can then be replayed.' : ''}
        </p>
      )}
      <dl class="wh-facts">
        <dt>URL</dt>
        <dd>
          <code>{e.url}</code>
        </dd>
        <dt>Events</dt>
        <dd>
          <code>{e.events.join(', ')}</code>
        </dd>
        <dt>Failures in a row</dt>
        <dd>{e.failureCount}</dd>
        {e.previousSecretExpiresAt && (
          <>
            <dt>Previous secret signs until</dt>
            <dd>{when(e.previousSecretExpiresAt)}</dd>
          </>
        )}
        <dt>Created</dt>
        <dd>{when(e.createdAt)}</dd>
      </dl>

      {write && (
        <>
          <div class="actions">
            <PauseButton endpoint={e} reload={reload} />
          </div>
          <TestPing endpoint={e} onSent={refreshDeliveries} />
        </>
      )}

      <DeliveriesSection endpoint={e} version={deliveriesVersion} />

      {write && <RotateSecret endpoint={e} reload={reload} />}

      {write ? (
        <details class="wh-settings">
          <summary>Edit settings</summary>
          <EndpointForm
            key={e.updatedAt}
            endpoint={e}
            onSaved={() => {
              announce('Endpoint saved')
              reload()
            }}
          />
        </details>
      ) : (
        <ReadOnlySettings endpoint={e} />
      )}

      {write && <DeleteEndpoint endpoint={e} />}
    </>
  )
}

function PauseButton({ endpoint: e, reload }: { endpoint: Endpoint; reload: () => void }) {
  const toggle = useAction(async () => {
    await api.patch<'/webhooks/{id}'>(`/webhooks/${encodeURIComponent(e.id)}`, { isActive: !e.isActive })
    announce(e.isActive ? 'Endpoint paused' : 'Endpoint resumed')
    reload()
  })
  return (
    <>
      <button type="button" class="secondary" disabled={toggle.busy} onClick={() => void toggle.run()}>
        {e.isActive ? 'Pause' : 'Resume'}
      </button>
      {toggle.error ? (
        <p class="field-error" role="alert">
          {explain(toggle.error)}
        </p>
      ) : null}
    </>
  )
}

function TestPing({ endpoint: e, onSent }: { endpoint: Endpoint; onSent: () => void }) {
  const [result, setResult] = useState<DeliveryDetail | null>(null)
  const ping = useAction(async () => {
    setResult(null)
    const delivery = await api.post<'/webhooks/{id}/test'>(`/webhooks/${encodeURIComponent(e.id)}/test`)
    setResult(delivery)
    onSent()
  })
  return (
    <section class="panel wh-panel" aria-labelledby="wh-ping">
      <h2 id="wh-ping">Test ping</h2>
      <p class="hint">Sends one signed webhook.test event now, even while paused; it is never retried.</p>
      <div class="actions">
        <button type="button" disabled={ping.busy} onClick={() => void ping.run()}>
          {ping.busy ? 'Sending…' : 'Send test ping'}
        </button>
      </div>
      {ping.error ? <ErrorNotice error={ping.error} /> : null}
      {result && (
        <p role="status" class="wh-ping-result">
          <DeliveryBadge status={result.status} /> {result.status === 'success' ? 'Delivered' : 'Not delivered'}:{' '}
          {result.responseStatus !== null ? `the receiver answered ${result.responseStatus}` : (result.errorMessage ?? 'no answer')}
          {result.duration !== null ? ` in ${result.duration} ms` : ''}. <a href={href(deliveryPath(e.id, result.id))}>See the request and response</a>
        </p>
      )}
    </section>
  )
}

function RotateSecret({ endpoint: e, reload }: { endpoint: Endpoint; reload: () => void }) {
  const [grace, setGrace] = useState(true)
  const [secret, setSecret] = useState<string | null>(null)
  const rotate = useAction(async () => {
    const rotated = await api.post<'/webhooks/{id}/rotate-secret'>(`/webhooks/${encodeURIComponent(e.id)}/rotate-secret`, { grace })
    setSecret(rotated.secret)
  })
  return (
    <section class="panel wh-panel" aria-labelledby="wh-rotate">
      <h2 id="wh-rotate">Signing secret</h2>
      {secret ? (
        <SecretOnce
          label="New signing secret"
          secret={secret}
          onDone={() => {
            setSecret(null)
            reload()
          }}
        />
      ) : (
        <>
          <CheckboxField
            label="Keep the old secret signing for 24 hours"
            checked={grace}
            onChecked={setGrace}
            hint="Every request carries both signatures until then, so you can deploy the new secret at leisure."
          />
          <div class="actions">
            <ConfirmButton label="Rotate secret" title="Rotate the signing secret?" confirmLabel="Rotate" danger={false} onConfirm={() => rotate.run()}>
              <p>
                {grace
                  ? 'The old secret keeps signing for 24 hours.'
                  : 'The old secret stops signing at once: receivers that still use it will reject every request.'}
              </p>
            </ConfirmButton>
          </div>
        </>
      )}
      {rotate.error ? <ErrorNotice error={rotate.error} /> : null}
    </section>
  )
}

function DeleteEndpoint({ endpoint: e }: { endpoint: Endpoint }) {
  const remove = useAction(async () => {
    await api.del<'/webhooks/{id}'>(`/webhooks/${encodeURIComponent(e.id)}`)
    announce('Endpoint deleted')
    navigate('/webhooks')
  })
  return (
    <div class="actions wh-danger">
      <ConfirmButton label="Delete endpoint" title="Delete this endpoint?" confirmLabel="Delete" onConfirm={() => remove.run()}>
        <p>Its deliveries and their attempts are deleted too, and scheduled retries are dropped.</p>
      </ConfirmButton>
      {remove.error ? (
        <p class="field-error" role="alert">
          {explain(remove.error)}
        </p>
      ) : null}
    </div>
  )
}

function ReadOnlySettings({ endpoint: e }: { endpoint: Endpoint }) {
  return (
    <section aria-labelledby="wh-settings">
      <h2 id="wh-settings">Settings</h2>
      <dl class="wh-facts">
        <dt>Filters</dt>
        <dd>{e.filters ? <code>{JSON.stringify(e.filters)}</code> : 'None'}</dd>
        <dt>Template</dt>
        <dd>{e.transform ? <code>{JSON.stringify(e.transform.template)}</code> : 'None'}</dd>
        <dt>Custom headers</dt>
        <dd>{e.customHeaderNames.length ? e.customHeaderNames.map((h) => `${h.name} (${h.hint})`).join(', ') : 'None'}</dd>
        <dt>Batching</dt>
        <dd>{e.batchEnabled ? `Every ${e.batchWindowSeconds} s` : 'Off'}</dd>
        <dt>Max concurrent requests</dt>
        <dd>{e.maxConcurrent}</dd>
        <dt>mTLS</dt>
        <dd>{e.mtlsEnabled ? 'On' : 'Off'}</dd>
      </dl>
    </section>
  )
}
