// Labelled controls for lists of like rows (rules, conditions, variants): the visible label stays short
// ("Value") while its accessible name says which row it belongs to ("Value (rule 2, condition 1)"), so a
// screen reader or a test finds each input apart. Hint and error are tied to the control as in ./form.
import type { ComponentChildren } from 'preact'
import { useId } from 'preact/hooks'

export type Choice = string | { value: string; label: string }
const choiceValue = (c: Choice) => (typeof c === 'string' ? c : c.value)
const choiceLabel = (c: Choice) => (typeof c === 'string' ? c : c.label)

interface ScopedProps {
  label: string
  /** Which row: read by screen readers after the label, not shown; left out when the label says it. */
  scope?: string
  hint?: ComponentChildren
  error?: string | null
  class?: string
}

function Scoped({ label, scope, hint, error, class: extra, children }: ScopedProps & { children: (a: Record<string, unknown>) => ComponentChildren }) {
  const id = useId()
  const hintId = hint ? `${id}-hint` : undefined
  const errorId = error ? `${id}-error` : undefined
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined
  return (
    <div class={`field${error ? ' invalid' : ''}${extra ? ` ${extra}` : ''}`}>
      <label for={id}>
        {label}
        {scope && <span class="visually-hidden"> ({scope})</span>}
      </label>
      {children({ id, 'aria-describedby': describedBy, 'aria-invalid': error ? true : undefined })}
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

export function ScopedInput(
  props: ScopedProps & {
    value: string
    onValue: (v: string) => void
    type?: 'text' | 'url' | 'datetime-local'
    inputMode?: 'text' | 'url' | 'numeric'
    placeholder?: string
    disabled?: boolean
  },
) {
  const { value, onValue, type = 'text', inputMode, placeholder, disabled, ...field } = props
  return (
    <Scoped {...field}>
      {(a) => (
        // Preact types each input type's attributes apart; these are valid for all of them.
        <input {...a} {...({ type, inputMode, placeholder, disabled } as {})} value={value} onInput={(e) => onValue(e.currentTarget.value)} />
      )}
    </Scoped>
  )
}

export function ScopedSelect(props: ScopedProps & { value: string; onValue: (v: string) => void; options: readonly Choice[]; disabled?: boolean }) {
  const { value, onValue, options, disabled, ...field } = props
  return (
    <Scoped {...field}>
      {(a) => (
        <select {...a} disabled={disabled} value={value} onChange={(e) => onValue(e.currentTarget.value)}>
          {options.map((o) => (
            <option value={choiceValue(o)}>{choiceLabel(o)}</option>
          ))}
        </select>
      )}
    </Scoped>
  )
}

/** Several of a fixed set: a list box where Ctrl or Shift (or a tap on a phone) picks more than one. */
export function ScopedMultiSelect(
  props: ScopedProps & { values: readonly string[]; onValues: (v: string[]) => void; options: readonly Choice[]; disabled?: boolean },
) {
  const { values, onValues, options, disabled, ...field } = props
  const chosen = new Set(values)
  return (
    <Scoped {...field}>
      {(a) => (
        <select
          {...a}
          multiple
          size={Math.min(options.length, 6)}
          disabled={disabled}
          onChange={(e) => onValues([...e.currentTarget.selectedOptions].map((o) => o.value))}
        >
          {options.map((o) => (
            <option value={choiceValue(o)} selected={chosen.has(choiceValue(o))}>
              {choiceLabel(o)}
            </option>
          ))}
        </select>
      )}
    </Scoped>
  )
}

export function ScopedTextArea(props: ScopedProps & { value: string; onValue: (v: string) => void; rows?: number; disabled?: boolean }) {
  const { value, onValue, rows = 3, disabled, ...field } = props
  return <Scoped {...field}>{(a) => <textarea {...a} rows={rows} disabled={disabled} value={value} onInput={(e) => onValue(e.currentTarget.value)} />}</Scoped>
}
