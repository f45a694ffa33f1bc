// /keys/:id: what the key is and what limits it, its life-cycle actions (pause, resume, rotate, revoke),
// and its settings. The console's own key is marked, rotating it switches the console to the new secret,
// and revoking it signs the console out.
import { useState } from 'preact/hooks'
import { api, explain, storeKey } from '../../api'
import { href } from '../../router'
import { useSession } from '../../session'
import { announce } from '../../ui/announce'
import { useAction, useAsync } from '../../ui/async'
import { ConfirmButton } from '../../ui/buttons'
import { TextField } from '../../ui/form'
import { SecretOnce } from '../../ui/secret'
import { ErrorNotice, Loaded } from '../../ui/states'
import type { ScreenProps } from '../types'
import { KeyFields } from './form'
import { permissionSummary } from './list'
import { describeSchedule, fieldErrors, formOf, patchBody, STATUS_BADGE, statusOf, type ApiKey, type Fields, type KeyForm, type PatchBody } from './model'
import { when } from './when'

const ActionError = ({ error }: { error: unknown }) =>
  error ? (
    <p class="field-error" role="alert">
      {explain(error)}
    </p>
  ) : null

function Facts({ apiKey }: { apiKey: ApiKey }) {
  const status = statusOf(apiKey)
  const s = apiKey.scopeFilters
  return (
    <dl class="key-facts">
      <dt>Status</dt>
      <dd>
        <span class={`badge ${STATUS_BADGE[status]}`}>{status}</span>
        {apiKey.pausedAt && ` since ${when(apiKey.pausedAt)}${apiKey.pausedReason ? `: ${apiKey.pausedReason}` : ''}`}
        {apiKey.revokedAt && ` on ${when(apiKey.revokedAt)}${apiKey.revokedReason ? `: ${apiKey.revokedReason}` : ''}`}
      </dd>
      {apiKey.rotating && (
        <>
          <dt>Rotation</dt>
          <dd>
            The previous secret keeps working for {apiKey.graceHoursRemaining} more hour{apiKey.graceHoursRemaining === 1 ? '' : 's'}.
          </dd>
        </>
      )}
      <dt>Prefix</dt>
      <dd>
        <code>{apiKey.keyPrefix}…</code>
      </dd>
      <dt>Mode</dt>
      <dd>{apiKey.mode}</dd>
      <dt>Permissions</dt>
      <dd>{permissionSummary(apiKey.permissions)}</dd>
      <dt>Allowed addresses</dt>
      <dd>{apiKey.allowedIps.length ? apiKey.allowedIps.join(', ') : 'any'}</dd>
      <dt>Scope</dt>
      <dd>
        {s ? [s.domains?.length && `domains ${s.domains.join(', ')}`, s.tags?.length && `tags ${s.tags.join(', ')}`].filter(Boolean).join('; ') : 'every link'}
      </dd>
      <dt>Schedule</dt>
      <dd>{apiKey.schedule ? describeSchedule(apiKey.schedule) : 'any time'}</dd>
      <dt>Monthly call cap</dt>
      <dd>{apiKey.monthlyCallCap ?? 'none'}</dd>
      <dt>Rate limit</dt>
      <dd>{apiKey.rateLimitOverride ?? 600} a minute</dd>
      <dt>Expires</dt>
      <dd>{apiKey.expiresAt ? when(apiKey.expiresAt) : 'never'}</dd>
      <dt>Last used</dt>
      <dd>{apiKey.lastUsedAt ? `${when(apiKey.lastUsedAt)}${apiKey.lastUsedIp ? ` from ${apiKey.lastUsedIp}` : ''}` : 'never'}</dd>
      <dt>Created</dt>
      <dd>{when(apiKey.createdAt)}</dd>
    </dl>
  )
}

function Actions({ apiKey, mine, onChanged }: { apiKey: ApiKey; mine: boolean; onChanged: (key: ApiKey) => void }) {
  const session = useSession()
  const path = `/api-keys/${encodeURIComponent(apiKey.id)}` as const
  const [reason, setReason] = useState('')
  const [grace, setGrace] = useState('24')
  const [secret, setSecret] = useState<string | null>(null)
  const pause = useAction(() => api.post<'/api-keys/{id}/pause'>(`${path}/pause`, reason.trim() ? { reason: reason.trim() } : {}))
  const resume = useAction(() => api.post<'/api-keys/{id}/resume'>(`${path}/resume`))
  const rotate = useAction((graceHours: number) => api.post<'/api-keys/{id}/rotate'>(`${path}/rotate`, { graceHours }))
  const revoke = useAction(() => api.post<'/api-keys/{id}/revoke'>(`${path}/revoke`))
  const [graceError, setGraceError] = useState<string | null>(null)

  const done = (key: ApiKey | undefined, message: string) => {
    if (!key) return
    announce(message)
    onChanged(key)
  }
  const doRotate = async () => {
    const hours = Number(grace)
    if (!Number.isInteger(hours) || hours < 0 || hours > 720) return setGraceError('Enter whole hours from 0 to 720.')
    setGraceError(null)
    const made = await rotate.run(hours)
    if (!made) return
    // The console keeps working with its own key: it switches to the new secret at once.
    if (mine) storeKey(made.key)
    setSecret(made.key)
    done(made, 'Key rotated')
  }
  const doRevoke = async () => {
    const key = await revoke.run()
    if (!key) return
    if (mine) return session.signOut()
    done(key, 'Key revoked')
  }

  return (
    <section aria-labelledby="key-actions">
      <h2 id="key-actions">Actions</h2>
      {secret && <SecretOnce label="The new secret" secret={secret} onDone={() => setSecret(null)} />}
      {apiKey.pausedAt ? (
        <div class="panel">
          <p>Requests with this key are refused (403 key_paused) until it is resumed.</p>
          <button type="button" disabled={resume.busy} onClick={async () => done(await resume.run(), 'Key resumed')}>
            Resume
          </button>
          <ActionError error={resume.error} />
        </div>
      ) : (
        <div class="panel">
          {mine && <p class="hint">This is the key the console is signed in with: pausing it stops the console until another key resumes it.</p>}
          <div class="key-action">
            <TextField label="Pause reason (optional)" value={reason} onValue={setReason} maxLength={500} />
            <button type="button" class="secondary" disabled={pause.busy} onClick={async () => done(await pause.run(), 'Key paused')}>
              Pause
            </button>
          </div>
          <ActionError error={pause.error} />
        </div>
      )}
      <div class="panel">
        <div class="key-action">
          <TextField
            label="Grace hours"
            type="number"
            inputMode="numeric"
            min={0}
            max={720}
            value={grace}
            onValue={setGrace}
            error={graceError}
            hint="How long the current secret keeps working (0 to 720)."
          />
          <button type="button" class="secondary" disabled={rotate.busy} onClick={doRotate}>
            Rotate
          </button>
        </div>
        {mine && <p class="hint">The console switches to the new secret by itself.</p>}
        <ActionError error={rotate.error} />
      </div>
      <div class="panel">
        <ConfirmButton label="Revoke" title="Revoke this key?" confirmLabel="Revoke key" onConfirm={doRevoke}>
          <p>Every request with it will get 401 from now on. This cannot be undone.</p>
          {mine && (
            <p>
              <strong>This is the key the console is signed in with: the console will sign out.</strong>
            </p>
          )}
        </ConfirmButton>
        <ActionError error={revoke.error} />
      </div>
    </section>
  )
}

function Settings({ apiKey, onChanged }: { apiKey: ApiKey; onChanged: (key: ApiKey) => void }) {
  const [form, setForm] = useState<KeyForm>(() => formOf(apiKey))
  const [errors, setErrors] = useState<Fields>({})
  const [nothing, setNothing] = useState(false)
  const save = useAction((body: PatchBody) => api.patch<'/api-keys/{id}'>(`/api-keys/${encodeURIComponent(apiKey.id)}`, body))
  const submit = async (event: Event) => {
    event.preventDefault()
    const { body, problems } = patchBody(form, apiKey)
    setErrors(problems)
    setNothing(false)
    if (Object.keys(problems).length) return
    if (!Object.keys(body).length) return setNothing(true)
    const key = await save.run(body)
    if (!key) return
    announce('Changes saved')
    setForm(formOf(key))
    onChanged(key)
  }
  const refused = save.error ? fieldErrors(save.error) : null
  const shown = { ...errors, ...(refused?.fields ?? {}) }
  return (
    <section aria-labelledby="key-settings">
      <h2 id="key-settings">Settings</h2>
      <form onSubmit={submit} noValidate>
        <KeyFields form={form} set={(patch) => setForm({ ...form, ...patch })} errors={shown} creating={false} />
        {Object.keys(shown).length > 0 && !refused?.general && (
          <p class="field-error" role="alert">
            Some fields need attention; see the messages next to them.
          </p>
        )}
        {refused?.general ? <ErrorNotice error={refused.general} /> : null}
        {nothing && (
          <p class="hint" role="status">
            Nothing changed.
          </p>
        )}
        <div class="actions">
          <button type="submit" disabled={save.busy}>
            {save.busy ? 'Saving…' : 'Save changes'}
          </button>
        </div>
      </form>
    </section>
  )
}

export function KeyDetail({ params }: ScreenProps) {
  const session = useSession()
  const state = useAsync(() => api.get<'/api-keys/{id}'>(`/api-keys/${encodeURIComponent(params.id!)}`), [params.id])
  // Actions answer the changed key; it replaces the loaded one without a reload.
  const [changed, setChanged] = useState<ApiKey | null>(null)
  const current = changed?.id === params.id ? changed : state.data
  return (
    <>
      <p>
        <a href={href('/keys')}>← All keys</a>
      </p>
      {!current && <h1 tabIndex={-1}>API key</h1>}
      <Loaded state={state} label="Loading the key…">
        {() => {
          const apiKey = current!
          const mine = apiKey.id === session.me.apiKey.id
          const writable = session.can('api_keys:write') && !apiKey.revokedAt
          return (
            <>
              <h1 tabIndex={-1}>
                {apiKey.name}
                {mine && <span class="badge ok key-this">this key</span>}
              </h1>
              <Facts apiKey={apiKey} />
              {writable && <Actions apiKey={apiKey} mine={mine} onChanged={setChanged} />}
              {writable && <Settings key={apiKey.id} apiKey={apiKey} onChanged={setChanged} />}
            </>
          )
        }}
      </Loaded>
    </>
  )
}
