// The endpoint's settings, for creating and for editing: URL, name, events from the catalogue, filters,
// format and template, custom headers, batching, concurrency, mTLS and whether it is active.
import { useState } from 'preact/hooks'
import { api, ApiError } from '../../api'
import { useAction, useAsync } from '../../ui/async'
import { CheckboxField, Field, SelectField, TextField } from '../../ui/form'
import { ErrorNotice } from '../../ui/states'
import {
  areaPatterns,
  FILTER_OPS,
  type Endpoint,
  type EndpointWithSecret,
  type FilterOp,
  type FilterRule,
  type Format,
  type CreateBody,
  type Info,
} from './model'

interface RuleDraft {
  field: string
  op: FilterOp
  value: string
}

interface Draft {
  name: string
  url: string
  events: string[]
  format: Format
  isActive: boolean
  maxConcurrent: string
  batchEnabled: boolean
  batchWindowSeconds: string
  mtlsEnabled: boolean
  filtered: boolean
  match: 'all' | 'any'
  rules: RuleDraft[]
  /** The filter's own event narrowing: not edited here, kept as saved. */
  filterEvents: string[] | null
  template: string
  replaceHeaders: boolean
  headers: { name: string; value: string }[]
}

const showValue = (value: unknown) => (value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value))

function draftOf(e: Endpoint | null): Draft {
  return {
    name: e?.name ?? '',
    url: e?.url ?? '',
    events: e?.events ?? [],
    format: e?.format ?? 'standard',
    isActive: e?.isActive ?? true,
    maxConcurrent: String(e?.maxConcurrent ?? 5),
    batchEnabled: e?.batchEnabled ?? false,
    batchWindowSeconds: String(e?.batchWindowSeconds ?? 10),
    mtlsEnabled: e?.mtlsEnabled ?? false,
    filtered: Boolean(e?.filters),
    match: e?.filters?.match ?? 'all',
    rules: (e?.filters?.rules ?? []).map((r) => ({ field: r.field, op: r.op, value: showValue(r.value) })),
    filterEvents: e?.filters?.events ?? null,
    template: e?.transform ? JSON.stringify(e.transform.template, null, 2) : '',
    replaceHeaders: !e,
    headers: [],
  }
}

const NO_VALUE: FilterOp[] = ['exists', 'not_exists']

/** A rule's value as typed: JSON when it reads as JSON (numbers, true, lists), else the text itself. */
function ruleValue(rule: RuleDraft): unknown {
  if (NO_VALUE.includes(rule.op)) return undefined
  const text = rule.value.trim()
  let parsed: unknown = text
  try {
    parsed = JSON.parse(text)
  } catch {
    // Plain text: a string value.
  }
  if ((rule.op === 'in' || rule.op === 'nin') && !Array.isArray(parsed))
    return text
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean)
  return parsed
}

type Problems = Record<string, string>

/** Fields that show their own errors; issues on other paths are shown under the form. */
const FIELD_KEYS: Record<string, true> = {
  url: true,
  name: true,
  events: true,
  filters: true,
  format: true,
  transform: true,
  customHeaders: true,
  maxConcurrent: true,
  batchWindowSeconds: true,
  mtlsEnabled: true,
  form: true,
}

/** The API's validation issues, keyed by the field they name first (url, events, filters…). */
function problemsOf(error: unknown): Problems {
  const problems: Problems = {}
  if (!(error instanceof ApiError) || error.code !== 'validation_failed') return problems
  const issues = (error.details as { issues?: { path?: string; message: string }[] } | undefined)?.issues ?? []
  for (const issue of issues) {
    const first = (issue.path ?? '').replace(/^\//, '').split(/[./]/)[0] ?? ''
    const key = first in FIELD_KEYS ? first : 'form'
    problems[key] = problems[key] ? `${problems[key]}; ${issue.message}` : `${issue.path ? `${issue.path}: ` : ''}${issue.message}`
  }
  return problems
}

/** The body the draft says; numbers and rule values go as typed, for the server to check and name. */
function bodyOf(d: Draft, creating: boolean): { body?: CreateBody; problems: Problems } {
  const problems: Problems = {}
  let transform: unknown = null
  if (d.format === 'standard' && d.template.trim()) {
    try {
      const template = JSON.parse(d.template)
      if (typeof template !== 'object' || template === null || Array.isArray(template)) throw new Error('not an object')
      transform = { kind: 'template', template }
    } catch {
      problems.transform = 'The template must be a JSON object, like {"text": "New link {{ data.shortUrl }}"}.'
    }
  }
  if (d.events.length === 0) problems.events = 'Choose at least one event.'
  if (Object.keys(problems).length) return { problems }
  const rules: FilterRule[] = d.rules.map((r) => {
    const value = ruleValue(r)
    return value === undefined ? { field: r.field.trim(), op: r.op } : { field: r.field.trim(), op: r.op, value }
  })
  const body: Record<string, unknown> = {
    name: d.name.trim() || null,
    url: d.url.trim(),
    events: d.events,
    format: d.format,
    isActive: d.isActive,
    maxConcurrent: Number(d.maxConcurrent),
    batchEnabled: d.batchEnabled,
    batchWindowSeconds: Number(d.batchWindowSeconds),
    filters: d.filtered && (rules.length || d.filterEvents) ? { match: d.match, events: d.filterEvents, rules } : null,
    transform: d.format === 'standard' ? transform : null,
  }
  if (d.mtlsEnabled || !creating) body.mtlsEnabled = d.mtlsEnabled
  if (d.replaceHeaders && (d.headers.length || !creating))
    body.customHeaders = d.headers.filter((h) => h.name.trim()).map((h) => ({ name: h.name.trim(), value: h.value }))
  return { body: body as CreateBody, problems }
}

export function EndpointForm({
  endpoint,
  onCreated,
  onSaved,
}: {
  endpoint: Endpoint | null
  onCreated?: (created: EndpointWithSecret) => void
  onSaved?: (saved: Endpoint) => void
}) {
  const info = useAsync(() => api.get<'/webhooks/info'>('/webhooks/info'), [])
  const [draft, setDraft] = useState(() => draftOf(endpoint))
  const [local, setLocal] = useState<Problems>({})
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => setDraft((d) => ({ ...d, [key]: value }))
  const creating = !endpoint
  const save = useAction(async () => {
    const { body, problems } = bodyOf(draft, creating)
    setLocal(problems)
    if (!body) return
    if (creating) onCreated?.(await api.post<'/webhooks'>('/webhooks', body))
    else onSaved?.(await api.patch<'/webhooks/{id}'>(`/webhooks/${encodeURIComponent(endpoint.id)}`, body))
  })
  const problems = { ...problemsOf(save.error), ...local }
  const validation = save.error instanceof ApiError && save.error.code === 'validation_failed'
  const fieldsToFix = Object.keys(problems).filter((k) => k !== 'form')

  return (
    <form
      class="wh-form"
      noValidate
      onSubmit={(e) => {
        e.preventDefault()
        void save.run()
      }}
    >
      <div class="form-grid">
        <TextField
          label="URL"
          type="url"
          inputMode="url"
          required
          value={draft.url}
          onValue={(v) => set('url', v)}
          error={problems.url}
          hint="Where lnk sends the POST requests (https)."
        />
        <TextField
          label="Name"
          value={draft.name}
          maxLength={100}
          onValue={(v) => set('name', v)}
          error={problems.name}
          hint="Optional, to tell endpoints apart."
        />
      </div>

      <EventsPicker info={info} chosen={draft.events} onChosen={(events) => set('events', events)} error={problems.events} />

      <FiltersEditor draft={draft} set={set} error={problems.filters} />

      <fieldset>
        <legend>Format</legend>
        <div class="form-grid">
          <SelectField
            label="Format"
            value={draft.format}
            onValue={(v) => set('format', v as Format)}
            error={problems.format}
            options={[
              { value: 'standard', label: 'standard (the event envelope)' },
              { value: 'slack', label: 'slack (incoming webhook message)' },
              { value: 'discord', label: 'discord (webhook message)' },
            ]}
          />
        </div>
        {draft.format === 'standard' && (
          <Field
            label="Template (JSON, optional)"
            error={problems.transform}
            hint={'Sent instead of the envelope; strings may hold {{ path }} placeholders, e.g. {"text": "New link {{ data.shortUrl }}"}.'}
          >
            {({ id, describedBy, invalid }) => (
              <textarea
                id={id}
                aria-describedby={describedBy}
                aria-invalid={invalid || undefined}
                spellcheck={false}
                value={draft.template}
                onInput={(e) => set('template', e.currentTarget.value)}
              />
            )}
          </Field>
        )}
      </fieldset>

      <HeadersEditor endpoint={endpoint} draft={draft} set={set} error={problems.customHeaders} />

      <fieldset>
        <legend>Delivery</legend>
        <div class="form-grid">
          <TextField
            label="Max concurrent requests"
            type="number"
            min={1}
            max={10}
            inputMode="numeric"
            value={draft.maxConcurrent}
            onValue={(v) => set('maxConcurrent', v)}
            error={problems.maxConcurrent}
            hint="1 to 10 requests in flight to this URL at once."
          />
          {draft.batchEnabled && (
            <TextField
              label="Batch window (seconds)"
              type="number"
              min={1}
              max={300}
              inputMode="numeric"
              value={draft.batchWindowSeconds}
              onValue={(v) => set('batchWindowSeconds', v)}
              error={problems.batchWindowSeconds}
            />
          )}
        </div>
        <CheckboxField
          label="Batch events"
          checked={draft.batchEnabled}
          onChecked={(v) => set('batchEnabled', v)}
          hint="Collect events for a window and send them as one request."
        />
        {(info.data?.mtlsConfigured || draft.mtlsEnabled) && (
          <CheckboxField label="Present the client certificate (mTLS)" checked={draft.mtlsEnabled} onChecked={(v) => set('mtlsEnabled', v)} />
        )}
        {problems.mtlsEnabled && <p class="field-error">{problems.mtlsEnabled}</p>}
        <CheckboxField label="Active" checked={draft.isActive} onChecked={(v) => set('isActive', v)} hint="Unchecked: paused, no events are sent." />
      </fieldset>

      {save.error && !validation ? <ErrorNotice error={save.error} /> : null}
      {problems.form && (
        <p class="field-error" role="alert">
          {problems.form}
        </p>
      )}
      {fieldsToFix.length > 0 && (
        <p class="field-error" role="alert">
          Some fields need attention: {fieldsToFix.join(', ')}.
        </p>
      )}
      <div class="actions">
        <button type="submit" disabled={save.busy}>
          {creating ? 'Create endpoint' : 'Save changes'}
        </button>
      </div>
    </form>
  )
}

function EventsPicker({
  info,
  chosen,
  onChosen,
  error,
}: {
  info: ReturnType<typeof useAsync<Info>>
  chosen: string[]
  onChosen: (events: string[]) => void
  error?: string
}) {
  const toggle = (name: string, on: boolean) => onChosen(on ? [...chosen.filter((e) => e !== name), name] : chosen.filter((e) => e !== name))
  if (info.status === 'error') return <ErrorNotice error={info.error} retry={info.reload} />
  const events = info.data?.events ?? []
  const areas = areaPatterns(events)
  // Saved patterns the catalogue no longer lists stay visible so they can be removed.
  const extra = chosen.filter((e) => e !== '*' && !areas.includes(e) && !events.includes(e))
  const all = chosen.includes('*')
  return (
    <fieldset aria-describedby={error ? 'wh-events-error' : undefined}>
      <legend>Events</legend>
      {!info.data ? (
        <p class="hint">Loading the event catalogue…</p>
      ) : (
        <>
          <CheckboxField label="* (every event)" checked={all} onChecked={(v) => toggle('*', v)} />
          <div class="wh-areas">
            {areas.map((area) => {
              const prefix = area.slice(0, -1)
              const areaOn = chosen.includes(area)
              return (
                <div class="wh-area" key={area}>
                  <CheckboxField label={area} checked={areaOn} onChecked={(v) => toggle(area, v)} />
                  {!all &&
                    !areaOn &&
                    events
                      .filter((e) => e.startsWith(prefix))
                      .map((e) => <CheckboxField key={e} label={e} checked={chosen.includes(e)} onChecked={(v) => toggle(e, v)} />)}
                </div>
              )
            })}
          </div>
          {extra.map((e) => (
            <CheckboxField key={e} label={e} checked onChecked={(v) => toggle(e, v)} />
          ))}
        </>
      )}
      {error && (
        <p class="field-error" id="wh-events-error">
          {error}
        </p>
      )}
    </fieldset>
  )
}

type Setter = <K extends keyof Draft>(key: K, value: Draft[K]) => void

function FiltersEditor({ draft, set, error }: { draft: Draft; set: Setter; error?: string }) {
  const setRule = (i: number, patch: Partial<RuleDraft>) =>
    set(
      'rules',
      draft.rules.map((r, j) => (j === i ? { ...r, ...patch } : r)),
    )
  return (
    <fieldset>
      <legend>Filters</legend>
      <CheckboxField
        label="Only send events that match rules"
        checked={draft.filtered}
        onChecked={(v) => {
          set('filtered', v)
          if (v && draft.rules.length === 0) set('rules', [{ field: 'data.link.domain', op: 'eq', value: '' }])
        }}
        hint="Rules look into the event envelope by dot path: data.link.domain, data.link.tags, data.click.unique…"
      />
      {draft.filtered && (
        <>
          <div class="form-grid">
            <SelectField
              label="Match"
              value={draft.match}
              onValue={(v) => set('match', v as 'all' | 'any')}
              options={[
                { value: 'all', label: 'all rules' },
                { value: 'any', label: 'any rule' },
              ]}
            />
          </div>
          {draft.rules.map((rule, i) => (
            <div class="wh-rule" key={i}>
              <TextField label={`Rule ${i + 1} field`} value={rule.field} onValue={(v) => setRule(i, { field: v })} />
              <SelectField label={`Rule ${i + 1} operator`} value={rule.op} onValue={(v) => setRule(i, { op: v as FilterOp })} options={FILTER_OPS} />
              {!NO_VALUE.includes(rule.op) && (
                <TextField
                  label={`Rule ${i + 1} value`}
                  value={rule.value}
                  onValue={(v) => setRule(i, { value: v })}
                  hint={rule.op === 'in' || rule.op === 'nin' ? 'Comma-separated, or a JSON list' : 'Text, or JSON (42, true)'}
                />
              )}
              <button
                type="button"
                class="secondary small"
                onClick={() =>
                  set(
                    'rules',
                    draft.rules.filter((_, j) => j !== i),
                  )
                }
              >
                Remove rule {i + 1}
              </button>
            </div>
          ))}
          <div class="actions">
            <button type="button" class="secondary small" onClick={() => set('rules', [...draft.rules, { field: '', op: 'eq', value: '' }])}>
              Add rule
            </button>
          </div>
        </>
      )}
      {error && <p class="field-error">{error}</p>}
    </fieldset>
  )
}

function HeadersEditor({ endpoint, draft, set, error }: { endpoint: Endpoint | null; draft: Draft; set: Setter; error?: string }) {
  const setHeader = (i: number, patch: Partial<{ name: string; value: string }>) =>
    set(
      'headers',
      draft.headers.map((h, j) => (j === i ? { ...h, ...patch } : h)),
    )
  return (
    <fieldset>
      <legend>Custom headers</legend>
      {endpoint && (
        <>
          <p class="hint">
            {endpoint.customHeaderNames.length
              ? `Saved: ${endpoint.customHeaderNames.map((h) => `${h.name} (${h.hint})`).join(', ')}. Values are never shown.`
              : 'None saved.'}
          </p>
          <CheckboxField
            label="Replace the custom headers"
            checked={draft.replaceHeaders}
            onChecked={(v) => set('replaceHeaders', v)}
            hint="The list below replaces every saved header (leave it empty to remove them all)."
          />
        </>
      )}
      {draft.replaceHeaders && (
        <>
          {draft.headers.map((h, i) => (
            <div class="wh-rule" key={i}>
              <TextField label={`Header ${i + 1} name`} value={h.name} onValue={(v) => setHeader(i, { name: v })} />
              <TextField label={`Header ${i + 1} value`} type="password" autoComplete="off" value={h.value} onValue={(v) => setHeader(i, { value: v })} />
              <button
                type="button"
                class="secondary small"
                onClick={() =>
                  set(
                    'headers',
                    draft.headers.filter((_, j) => j !== i),
                  )
                }
              >
                Remove header {i + 1}
              </button>
            </div>
          ))}
          <div class="actions">
            <button type="button" class="secondary small" onClick={() => set('headers', [...draft.headers, { name: '', value: '' }])}>
              Add header
            </button>
          </div>
        </>
      )}
      {error && <p class="field-error">{error}</p>}
    </fieldset>
  )
}
