// "Try a visit": describe a visitor (country, browser, languages, address, referrer, query, time) and ask the
// server where the saved link would send them (POST /v1/links/{id}/resolve), with each rule's trace. The
// server answers from the link as saved and records nothing, so trying changes no count or limit.
import { useState } from 'preact/hooks'
import { api, explain } from '../../api'
import type { Body, Data } from '../../api-types'
import { announce } from '../../ui/announce'
import { useAction } from '../../ui/async'
import { SelectField, TextField } from '../../ui/form'
import { fieldErrors, fromLocalInput, type Link } from './model'
import { countryChoices } from './countries'
import { OP_LABELS, specOf } from './routing-model'
import { VIEWER_ZONE } from './zones'

type ResolveBody = Body<'/links/{id}/resolve', 'post'>
type Resolved = Data<'/links/{id}/resolve', 'post'>

/** Common browsers' user agents, so a person need not know one by heart. */
const AGENTS = [
  ['iPhone', 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1'],
  ['Android', 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36'],
  ['Desktop Chrome', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36'],
] as const

const OUTCOMES: Record<Resolved['outcome'], string> = {
  redirect: 'Redirected',
  fallback: 'Sent to the fallback URL (expired or over a limit)',
  gone: 'Gone: the link no longer redirects',
  password: 'Asked for the password first',
  captcha: 'Asked to solve the captcha first',
  consent: 'Asked for consent first',
  bridge_page: 'Shown the bridge page',
  sandbox: 'Shown the test link page (no redirect)',
}

interface Visit {
  country: string
  city: string
  userAgent: string
  acceptLanguage: string
  ip: string
  referrer: string
  query: string
  at: string
  trigger: string
}
const EMPTY: Visit = { country: '', city: '', userAgent: '', acceptLanguage: '', ip: '', referrer: '', query: '', at: '', trigger: '' }
const VISIT_FIELDS = new Set(Object.keys(EMPTY))

/** The resolve body: only what was filled in; the query text (`a=1&b=2`) as an object. */
function bodyOf(v: Visit): ResolveBody {
  const body: Record<string, unknown> = {}
  for (const name of ['country', 'city', 'userAgent', 'acceptLanguage', 'ip', 'referrer', 'trigger'] as const) if (v[name].trim()) body[name] = v[name].trim()
  if (v.query.trim()) body.query = Object.fromEntries(new URLSearchParams(v.query.trim().replace(/^\?/, '')))
  if (v.at) body.at = fromLocalInput(v.at)
  return body as ResolveBody
}

export function TryVisit({ link }: { link: Link }) {
  const [visit, setVisit] = useState(EMPTY)
  const [result, setResult] = useState<Resolved | null>(null)
  const run = useAction(async (v: Visit) => {
    // The last answer goes while the next is asked for, so no answer shows beside a visit it was not for.
    setResult(null)
    const answer = await api.post<'/links/{id}/resolve'>(`/links/${encodeURIComponent(link.id)}/resolve`, bodyOf(v))
    setResult(answer)
    announce(`${OUTCOMES[answer.outcome] ?? answer.outcome}${answer.destinationUrl ? `: ${answer.destinationUrl}` : ''}`)
  })
  const errors = fieldErrors(run.error, VISIT_FIELDS)
  const set = (name: keyof Visit) => (value: string) => setVisit((v) => ({ ...v, [name]: value }))
  const text = (name: keyof Visit, label: string, extra: Partial<Parameters<typeof TextField>[0]> = {}) => (
    <TextField label={label} value={visit[name]} onValue={set(name)} error={errors[name]} {...extra} />
  )
  return (
    <section class="panel try-visit" aria-labelledby="try-visit-title">
      <h2 id="try-visit-title">Try a visit</h2>
      <p class="hint">Where would this visitor go? The saved link answers; nothing is counted. Leave out what you do not want to set.</p>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault()
          void run.run(visit)
        }}
      >
        <div class="form-grid">
          <SelectField
            label="Visitor country"
            value={visit.country}
            onValue={set('country')}
            options={[{ value: '', label: 'Not known' }, ...countryChoices()]}
            error={errors.country}
          />
          {text('city', 'Visitor city', { hint: 'Used by city rules; empty: from the IP address, when the server has a city database' })}
          {text('acceptLanguage', 'Accept-Language', { placeholder: 'pt-BR,pt;q=0.9,en;q=0.5' })}
          {text('ip', 'IP address', { placeholder: '203.0.113.7' })}
          {text('referrer', 'Referrer', { type: 'url', placeholder: 'https://news.example/story' })}
          {text('query', 'Query', { placeholder: 'utm_source=mail&ref=a', hint: 'Parameters of the visit, as in an address' })}
          {text('at', 'Time of the visit', { type: 'datetime-local', hint: `In your time zone (${VIEWER_ZONE}); empty: now` })}
          <SelectField
            label="Opened by"
            value={visit.trigger}
            onValue={set('trigger')}
            options={[
              { value: '', label: 'Not given (the link)' },
              { value: 'link', label: 'The link' },
              { value: 'qr', label: 'A QR code' },
            ]}
            error={errors.trigger}
          />
        </div>
        {text('userAgent', 'User agent', { hint: 'The browser that visits; or pick one below' })}
        <div class="actions agent-presets" role="group" aria-label="User agent presets">
          {AGENTS.map(([name, agent]) => (
            <button type="button" class="secondary small" aria-pressed={visit.userAgent === agent} onClick={() => set('userAgent')(agent)}>
              {name}
            </button>
          ))}
        </div>
        <div class="actions">
          <button type="submit" disabled={run.busy}>
            Try it
          </button>
          {run.busy && <span role="status">Asking the server…</span>}
        </div>
        {run.error != null && (
          <p class="field-error" role="alert">
            {errors[''] ?? explain(run.error)}
          </p>
        )}
      </form>
      {result && <Outcome result={result} link={link} />}
    </section>
  )
}

/** A condition in words: a choice by its name (countries too), an instant in the viewer's time. */
const conditionText = (c: { field: string; op: string; value?: unknown }) => {
  const spec = specOf(c.field)
  const one = (v: unknown) =>
    c.field === 'time' && typeof v === 'string' ? new Date(v).toLocaleString() : (spec.choices?.().find((o) => o.value === v)?.label ?? String(v))
  const shown = c.value === undefined ? '' : Array.isArray(c.value) ? c.value.map(one).join(', ') : one(c.value)
  const field = c.field.startsWith('query.') ? `query parameter ${c.field.slice(6)}` : specOf(c.field).label.toLowerCase()
  return `${field} ${OP_LABELS[c.op] ?? c.op}${shown ? ` ${shown}` : ''}`
}

function Outcome({ result, link }: { result: Resolved; link: Link }) {
  const rules = link.routingRules ?? []
  const ruleIndex = rules.findIndex((r) => r.id === result.ruleId)
  const variantIndex = (link.variants ?? []).findIndex((v) => v.id === result.variantId)
  const ruleName = (i: number) => `Rule ${i + 1}${rules[i]?.name ? ` (${rules[i]?.name})` : ''}`
  return (
    <div class="try-result">
      <dl class="try-facts">
        <dt>Outcome</dt>
        <dd>{OUTCOMES[result.outcome] ?? result.outcome}</dd>
        <dt>Goes to</dt>
        <dd class="destination">{result.destinationUrl ?? '—'}</dd>
        <dt>Rule</dt>
        <dd>{result.ruleId ? `${ruleIndex >= 0 ? ruleName(ruleIndex) : 'A rule'} matched (${result.ruleId})` : 'No rule matched'}</dd>
        <dt>Variant</dt>
        <dd>{result.variantId ? `Variant ${variantIndex + 1} (${result.variantId})` : 'No variant'}</dd>
      </dl>
      {result.trace.length > 0 && (
        <>
          <h3>Rules, in order</h3>
          <ol class="try-trace">
            {result.trace.map((t) => {
              const i = rules.findIndex((r) => r.id === t.ruleId)
              const rule = rules[i]
              return (
                <li class={t.matched ? 'matched' : ''}>
                  <strong>{i >= 0 ? ruleName(i) : t.ruleId}</strong>: {t.matched ? 'matched' : 'did not match'}
                  <ul>
                    {t.conditions.map((held, j) => {
                      const c = rule?.conditions[j] as { field: string; op: string; value?: unknown } | undefined
                      return (
                        <li>
                          {c ? conditionText(c) : `Condition ${j + 1}`}:{' '}
                          <span class={held ? 'badge ok' : 'badge muted'}>{held ? 'holds' : 'does not hold'}</span>
                        </li>
                      )
                    })}
                  </ul>
                </li>
              )
            })}
          </ol>
        </>
      )}
    </div>
  )
}
