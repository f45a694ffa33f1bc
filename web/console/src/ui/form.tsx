// Labelled form controls: every input has a visible label, an optional hint, and its error tied to it
// with aria-describedby, so screen readers read what is wrong where it is wrong.
import type { ComponentChildren } from 'preact'
import { useId } from 'preact/hooks'

interface FieldProps {
  label: string
  hint?: ComponentChildren
  error?: string | null
  children: (ids: { id: string; describedBy: string | undefined; invalid: boolean }) => ComponentChildren
}

export function Field({ label, hint, error, children }: FieldProps) {
  const id = useId()
  const hintId = hint ? `${id}-hint` : undefined
  const errorId = error ? `${id}-error` : undefined
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined
  return (
    <div class={`field${error ? ' invalid' : ''}`}>
      <label for={id}>{label}</label>
      {children({ id, describedBy, invalid: Boolean(error) })}
      {hint && (
        <p class="hint" id={hintId}>
          {hint}
        </p>
      )}
      {error && (
        <p class="field-error" id={errorId}>
          {error}
        </p>
      )}
    </div>
  )
}

interface InputProps {
  label: string
  type?: 'text' | 'url' | 'email' | 'number' | 'password' | 'search' | 'datetime-local' | 'date' | 'time' | 'color'
  name?: string
  placeholder?: string
  required?: boolean
  disabled?: boolean
  autoComplete?: string
  inputMode?: 'text' | 'url' | 'email' | 'numeric' | 'decimal' | 'search'
  min?: string | number
  max?: string | number
  step?: string | number
  maxLength?: number
  value: string
  onValue: (value: string) => void
  hint?: ComponentChildren
  error?: string | null
}

export const TextField = ({ label, value, onValue, hint, error, ...rest }: InputProps) => (
  <Field label={label} hint={hint} error={error}>
    {({ id, describedBy, invalid }) => (
      // Preact types each input type's attributes apart; the props above are valid for all of them.
      <input
        id={id}
        aria-describedby={describedBy}
        aria-invalid={invalid || undefined}
        value={value}
        onInput={(e) => onValue((e.currentTarget as HTMLInputElement).value)}
        {...(rest as {})}
      />
    )}
  </Field>
)

export function SelectField({
  label,
  value,
  onValue,
  options,
  hint,
  error,
}: {
  label: string
  value: string
  onValue: (value: string) => void
  options: readonly (string | { value: string; label: string })[]
  hint?: ComponentChildren
  error?: string | null
}) {
  return (
    <Field label={label} hint={hint} error={error}>
      {({ id, describedBy, invalid }) => (
        <select id={id} aria-describedby={describedBy} aria-invalid={invalid || undefined} value={value} onChange={(e) => onValue(e.currentTarget.value)}>
          {options.map((o) => (typeof o === 'string' ? <option value={o}>{o}</option> : <option value={o.value}>{o.label}</option>))}
        </select>
      )}
    </Field>
  )
}

export function CheckboxField({
  label,
  checked,
  onChecked,
  hint,
}: {
  label: string
  checked: boolean
  onChecked: (checked: boolean) => void
  hint?: ComponentChildren
}) {
  const id = useId()
  return (
    <div class="field checkbox">
      <input
        type="checkbox"
        id={id}
        checked={checked}
        onChange={(e) => onChecked(e.currentTarget.checked)}
        aria-describedby={hint ? `${id}-hint` : undefined}
      />
      <label for={id}>{label}</label>
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
    </div>
  )
}
