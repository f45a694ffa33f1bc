// The link form, for creating and for editing: every option of the create body, grouped as a person thinks
// of them. Server validation errors land next to the field they name; the rest by the save button.
import { useState } from 'preact/hooks'
import { explain } from '../../api'
import { useAction } from '../../ui/async'
import { CheckboxField, SelectField, TextField } from '../../ui/form'
import { SocialCard, TextArea } from './fields'
import { FORM_FIELDS, fieldErrors, finalDestination, issuesOf, UTM_FIELDS, type LinkForm } from './model'
import { placeIssues, rulePaths, sameRows, variantPaths } from './routing-model'
import { RuleEditor } from './rules'
import { VariantEditor } from './variants'

const REDIRECTS = [
  { value: '302', label: '302 Found (temporary, default)' },
  { value: '301', label: '301 Moved permanently' },
  { value: '307', label: '307 Temporary redirect' },
  { value: '308', label: '308 Permanent redirect' },
]
const CARDS = [
  { value: '', label: 'Not set' },
  { value: 'summary', label: 'Summary (small image)' },
  { value: 'summary_large_image', label: 'Summary with large image' },
  { value: 'player', label: 'Player' },
]

const ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone

export function LinkFormView({
  initial,
  mode,
  readOnly = false,
  hasPassword = false,
  shortHost,
  onSave,
}: {
  initial: LinkForm
  mode: 'create' | 'edit'
  readOnly?: boolean
  hasPassword?: boolean
  shortHost: string
  /** Saves the form; answers a note to show and the form as saved, or throws the API's error. */
  onSave: (form: LinkForm) => Promise<{ note: string; next?: LinkForm } | void>
}) {
  const [form, setForm] = useState(initial)
  const [note, setNote] = useState('')
  const [sent, setSent] = useState(initial)
  const save = useAction(async (f: LinkForm) => {
    setNote('')
    setSent(f)
    const done = await onSave(f)
    if (done?.next) setForm(done.next)
    setNote(done?.note ?? '')
  })
  const errors = fieldErrors(save.error, FORM_FIELDS)
  const generalError =
    save.error != null && (errors[''] ?? (Object.keys(errors).length ? 'Some fields need a change: see the messages next to them.' : explain(save.error)))
  const set =
    <K extends keyof LinkForm>(name: K) =>
    (value: LinkForm[K]) =>
      setForm((f) => ({ ...f, [name]: value }))
  const text = (name: keyof LinkForm & string, label: string, extra: Partial<Parameters<typeof TextField>[0]> = {}) => (
    <TextField label={label} value={form[name] as string} onValue={set(name) as (v: string) => void} error={errors[name]} disabled={readOnly} {...extra} />
  )
  const flag = (name: keyof LinkForm & string, label: string, hint?: string) => (
    <CheckboxField label={label} checked={form[name] as boolean} onChecked={set(name) as (v: boolean) => void} hint={errors[name] ?? hint} />
  )
  const final = finalDestination(form)
  // The routing editors place each issue at the exact input its path names (routingRules.0.conditions.1.value).
  // Their paths count rows as sent: once rows are added, moved or removed they would point at other rows, so
  // they show only while the rows are still the ones sent.
  const issues = issuesOf(save.error)
  const ruleErrors = sameRows(sent.routingRules, form.routingRules) ? placeIssues(issues, rulePaths(form.routingRules), 'routingRules') : {}
  const variantErrors = sameRows(sent.variants, form.variants) ? placeIssues(issues, variantPaths(form.variants), 'variants') : {}

  return (
    <form
      class="link-form"
      noValidate
      onSubmit={(e) => {
        e.preventDefault()
        if (!readOnly) void save.run(form)
      }}
    >
      <fieldset class="bare" disabled={readOnly}>
        <fieldset>
          <legend>Destination</legend>
          {text('destinationUrl', 'Destination URL', { type: 'url', required: true, inputMode: 'url', placeholder: 'https://example.com/page' })}
          <div class="form-grid">
            {text('slug', 'Slug', { hint: mode === 'create' ? 'Leave empty for 7 random characters' : 'Letters, digits, _ and -' })}
            {text('domain', 'Domain', { hint: 'Leave empty for the default short domain' })}
          </div>
          {text('title', 'Title')}
          <TextArea label="Description" value={form.description} onValue={set('description')} error={errors.description} disabled={readOnly} />
          {text('tags', 'Tags', { hint: 'Separated by commas' })}
        </fieldset>

        <fieldset>
          <legend>UTM parameters</legend>
          <div class="form-grid">{UTM_FIELDS.map(([name, , label]) => text(name, `UTM ${label.toLowerCase()}`))}</div>
          <p class="utm-preview">
            <span class="hint">Visitors go to: </span>
            <output aria-label="Final destination URL">{final ?? 'Enter a full destination URL to see it here.'}</output>
          </p>
        </fieldset>

        <fieldset>
          <legend>Access and limits</legend>
          <div class="form-grid">
            {text('expiresAt', 'Expires at', { type: 'datetime-local', hint: `In your time zone (${ZONE}); empty: never` })}
            {text('clickLimit', 'Click limit', { inputMode: 'numeric', hint: 'Clicks before the link stops; empty: no limit' })}
            {text('uniqueIpLimit', 'Unique visitor limit', { inputMode: 'numeric', hint: 'Distinct visitors served; empty: no limit' })}
          </div>
          {readOnly ? (
            <p>{hasPassword ? 'Visitors must enter a password.' : 'No password.'}</p>
          ) : (
            <>
              {text('password', hasPassword ? 'New password' : 'Password', {
                type: 'password',
                autoComplete: 'new-password',
                hint: hasPassword ? 'A password is set. Type a new one to replace it.' : 'Visitors must enter it; empty: no password',
              })}
              {hasPassword && flag('clearPassword', 'Remove the password')}
            </>
          )}
          {flag('captchaEnabled', 'Ask for a captcha', "A proof-of-work check, solved by the visitor's browser")}
          {flag('consentRequired', 'Ask for consent before redirecting', 'Shows the destination with Continue and Go back')}
        </fieldset>

        <fieldset>
          <legend>Redirect</legend>
          <div class="form-grid">
            <SelectField
              label="Redirect status"
              value={form.redirectStatus}
              onValue={set('redirectStatus')}
              options={REDIRECTS}
              error={errors.redirectStatus}
            />
            {text('fallbackUrl', 'Fallback URL', { type: 'url', hint: 'Where visitors go once the link expired or reached a limit' })}
            {text('bridgePageId', 'Bridge page ID', { hint: 'A bridge page (bp_…) shown instead of redirecting' })}
            {text('folderId', 'Folder')}
            {text('campaignId', 'Campaign ID')}
          </div>
          {flag('deepLinkEnabled', 'Open apps (deep links)', 'Phones open YouTube, Spotify and other known apps directly')}
          {flag('conversionTracking', 'Conversion tracking', 'Hands the destination lnk_cid for POST /v1/conversions')}
          {flag('publicStatsEnabled', 'Public stats page', "Anyone with the address can see the link's clicks at its short URL with +")}
        </fieldset>

        <RuleEditor rules={form.routingRules} onRules={set('routingRules')} errors={ruleErrors} disabled={readOnly} />
        <VariantEditor variants={form.variants} onVariants={set('variants')} errors={variantErrors} disabled={readOnly} />

        <fieldset>
          <legend>Social preview</legend>
          <div class="og-grid">
            <div>
              {text('ogTitle', 'Preview title', { hint: 'Falls back to the title' })}
              <TextArea
                label="Preview description"
                value={form.ogDescription}
                onValue={set('ogDescription')}
                error={errors.ogDescription}
                disabled={readOnly}
                hint="Falls back to the description"
              />
              {text('ogImageUrl', 'Preview image URL', { type: 'url' })}
              <SelectField label="Twitter card" value={form.twitterCard} onValue={set('twitterCard')} options={CARDS} error={errors.twitterCard} />
            </div>
            <SocialCard form={form} shortHost={form.domain.trim() || shortHost} />
          </div>
        </fieldset>

        {mode === 'edit' && (
          <fieldset>
            <legend>State</legend>
            {flag('isActive', 'Active', 'An inactive link answers 404')}
            {flag('isArchived', 'Archived', 'Hidden from the list unless you ask for archived links')}
          </fieldset>
        )}
      </fieldset>

      {!readOnly && (
        <div class="actions">
          <button type="submit" disabled={save.busy}>
            {mode === 'create' ? 'Create link' : 'Save changes'}
          </button>
          {save.busy && <span role="status">Saving…</span>}
          {!save.busy && note && <span role="status">{note}</span>}
        </div>
      )}
      {generalError && (
        <p class="field-error" role="alert">
          {generalError}
        </p>
      )}
    </form>
  )
}
