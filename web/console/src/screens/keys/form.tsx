// The key's settings form, shared by creating and editing: permissions as checkboxes, restrictions in
// their own groups, and each server refusal shown next to the field it names.
import type { ComponentChildren } from 'preact'
import { useId } from 'preact/hooks'
import { useSession } from '../../session'
import { CheckboxField, Field, SelectField, TextField } from '../../ui/form'
import { DAY_NAMES, PERMISSIONS, timeZones, type Fields, type KeyForm } from './model'

function TextArea({
  label,
  value,
  onValue,
  hint,
  error,
  placeholder,
}: {
  label: string
  value: string
  onValue: (v: string) => void
  hint?: ComponentChildren
  error?: string
  placeholder?: string
}) {
  return (
    <Field label={label} hint={hint} error={error}>
      {({ id, describedBy, invalid }) => (
        <textarea
          id={id}
          rows={3}
          placeholder={placeholder}
          aria-describedby={describedBy}
          aria-invalid={invalid || undefined}
          value={value}
          onInput={(e) => onValue(e.currentTarget.value)}
        />
      )}
    </Field>
  )
}

/** A fieldset whose error is tied to it, for groups of checkboxes. */
function Group({ legend, error, hint, children }: { legend: string; error?: string; hint?: ComponentChildren; children: ComponentChildren }) {
  const id = useId()
  const describedBy = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ') || undefined
  return (
    <fieldset aria-describedby={describedBy} class={error ? 'invalid' : undefined}>
      <legend>{legend}</legend>
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {children}
      {error && (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </fieldset>
  )
}

export function KeyFields({ form, set, errors, creating }: { form: KeyForm; set: (patch: Partial<KeyForm>) => void; errors: Fields; creating: boolean }) {
  const session = useSession()
  const own = session.me.apiKey
  // A key grants only what it holds; offering more would only earn a refusal.
  const grantable = PERMISSIONS.filter((p) => session.can(p))
  const toggle = (list: string[], item: string, on: boolean) => (on ? [...list, item] : list.filter((x) => x !== item))
  return (
    <>
      <div class="form-grid">
        <TextField label="Name" value={form.name} onValue={(name) => set({ name })} required maxLength={100} error={errors.name} />
        {creating && (
          <SelectField
            label="Mode"
            value={form.mode}
            onValue={(mode) => set({ mode: mode as KeyForm['mode'] })}
            options={
              own.mode === 'test'
                ? [{ value: 'test', label: 'Test (sandbox)' }]
                : [
                    { value: 'live', label: 'Live' },
                    { value: 'test', label: 'Test (sandbox)' },
                  ]
            }
            hint="A test key sees and makes test records only."
            error={errors.mode}
          />
        )}
      </div>

      <Group legend="Permissions" error={errors.permissions} hint="What the key may do. A key can grant only permissions the signed-in key holds.">
        {own.permissions.includes('*') && (
          <CheckboxField
            label="All permissions (*)"
            checked={form.all}
            onChecked={(all) => set({ all })}
            hint="Includes permissions added in later versions."
          />
        )}
        {!form.all && (
          <div class="key-permissions">
            {grantable.map((p) => (
              <CheckboxField label={p} checked={form.permissions.includes(p)} onChecked={(on) => set({ permissions: toggle(form.permissions, p, on) })} />
            ))}
          </div>
        )}
      </Group>

      <fieldset>
        <legend>Where and what</legend>
        <TextArea
          label="Allowed IPs and CIDRs"
          value={form.allowedIps}
          onValue={(allowedIps) => set({ allowedIps })}
          placeholder={'203.0.113.7\n192.0.2.0/24'}
          hint="One address or range a line. Empty: any address."
          error={errors.allowedIps}
        />
        <div class="form-grid">
          <TextArea
            label="Domains in scope"
            value={form.domains}
            onValue={(domains) => set({ domains })}
            hint="One domain a line. Empty: every domain."
            error={errors.domains}
          />
          <TextArea
            label="Tags in scope"
            value={form.tags}
            onValue={(tags) => set({ tags })}
            hint="One tag a line; a link needs one of them. Empty: any tag."
            error={errors.tags}
          />
        </div>
      </fieldset>

      <Group legend="Schedule" error={errors.schedule}>
        <CheckboxField
          label="Only at certain times"
          checked={form.scheduled}
          onChecked={(scheduled) => set({ scheduled })}
          hint="Outside the window the key is refused (403 outside_schedule)."
        />
        {form.scheduled && (
          <>
            <SelectField label="Time zone" value={form.timezone} onValue={(timezone) => set({ timezone })} options={timeZones()} error={errors.timezone} />
            <Group legend="Days" error={errors.days}>
              <div class="key-days">
                {DAY_NAMES.map((day, i) => (
                  <CheckboxField
                    label={day}
                    checked={form.days.includes(i)}
                    onChecked={(on) => set({ days: on ? [...form.days, i] : form.days.filter((d) => d !== i) })}
                  />
                ))}
              </div>
            </Group>
            <div class="form-grid">
              <TextField
                label="Start time"
                type="time"
                value={form.start}
                onValue={(start) => set({ start })}
                error={errors.start}
                hint="Local time in the zone above."
              />
              <TextField
                label="End time"
                type="time"
                value={form.end}
                onValue={(end) => set({ end })}
                error={errors.end}
                hint="Not included. Before the start wraps past midnight; 00:00 is the end of the day."
              />
            </div>
          </>
        )}
      </Group>

      <fieldset>
        <legend>Limits</legend>
        <div class="form-grid">
          <TextField
            label="Monthly call cap"
            type="number"
            inputMode="numeric"
            min={1}
            value={form.monthlyCallCap}
            onValue={(monthlyCallCap) => set({ monthlyCallCap })}
            hint="Calls per UTC calendar month. Empty: no cap."
            error={errors.monthlyCallCap}
          />
          <TextField
            label="Rate limit per minute"
            type="number"
            inputMode="numeric"
            min={1}
            max={100000}
            value={form.rateLimitOverride}
            onValue={(rateLimitOverride) => set({ rateLimitOverride })}
            hint="Empty: the default 600."
            error={errors.rateLimitOverride}
          />
          <TextField
            label="Expires at"
            type="datetime-local"
            value={form.expiresAt}
            onValue={(expiresAt) => set({ expiresAt })}
            hint="Your local time. Empty: never."
            error={errors.expiresAt}
          />
        </div>
      </fieldset>
    </>
  )
}
