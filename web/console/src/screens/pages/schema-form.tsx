// Forms built from a block type's JSON Schema (GET /v1/bridge-pages/block-types), so every type the server
// knows gets a form without the console listing fields: strings become text boxes (long ones text areas),
// a choice of constants a select, booleans a checkbox, numbers a number box (empty is null where null is
// allowed), and an array of objects a repeated group of the same.
import { CheckboxField, Field, SelectField, TextField } from '../../ui/form'
import type { Schema } from './model'

type Kind =
  | { kind: 'text'; long: boolean; nullable: boolean }
  | { kind: 'choice'; options: unknown[]; nullable: boolean }
  | { kind: 'boolean' }
  | { kind: 'number'; nullable: boolean }
  | { kind: 'list'; item: Schema }
  | { kind: 'unknown' }

const isNumeric = (s: Schema): boolean => s.type === 'integer' || s.type === 'number' || Boolean(s.anyOf?.some(isNumeric))

function kindOf(schema: Schema): Kind {
  if (schema.anyOf) {
    const options = schema.anyOf.filter((s) => s.type !== 'null')
    const nullable = options.length < schema.anyOf.length
    if (options.length && options.every((s) => 'const' in s)) return { kind: 'choice', options: options.map((s) => s.const), nullable }
    if (options.some(isNumeric)) return { kind: 'number', nullable }
    if (options.length === 1) {
      const inner = kindOf(options[0]!)
      return inner.kind === 'text' ? { ...inner, nullable } : inner
    }
    return { kind: 'unknown' }
  }
  if (schema.type === 'string') return { kind: 'text', long: (schema.maxLength ?? 0) > 300, nullable: false }
  if (schema.type === 'boolean') return { kind: 'boolean' }
  if (isNumeric(schema)) return { kind: 'number', nullable: false }
  if (schema.type === 'array' && schema.items?.type === 'object') return { kind: 'list', item: schema.items }
  return { kind: 'unknown' }
}

/** "avatarUrl" → "Avatar URL", "linkId" → "Link ID". */
export function labelOf(name: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/_/g, ' ')
    .split(' ')
    .map((w) => (/^(url|id)$/i.test(w) ? w.toUpperCase() : w.toLowerCase()))
  const text = words.join(' ')
  return text.charAt(0).toUpperCase() + text.slice(1)
}

type Values = Record<string, unknown>

export function SchemaFields({
  schema,
  values,
  onValues,
  errors,
  path = 'fields',
}: {
  schema: Schema
  values: Values
  onValues: (values: Values) => void
  /** Issue messages by path ('fields.items.0.url'), from a 400 validation_failed. */
  errors: Record<string, string>
  path?: string
}) {
  const set = (name: string, value: unknown) => onValues({ ...values, [name]: value })
  return (
    <>
      {Object.entries(schema.properties ?? {}).map(([name, prop]) => (
        <SchemaField name={name} schema={prop} value={values[name]} onValue={(v) => set(name, v)} errors={errors} path={`${path}.${name}`} />
      ))}
    </>
  )
}

function SchemaField({
  name,
  schema,
  value,
  onValue,
  errors,
  path,
}: {
  name: string
  schema: Schema
  value: unknown
  onValue: (value: unknown) => void
  errors: Record<string, string>
  path: string
}) {
  const kind = kindOf(schema)
  const label = labelOf(name)
  const hint = schema.description
  const error = errors[path] ?? null
  switch (kind.kind) {
    case 'text':
      if (kind.long)
        return (
          <Field label={label} hint={hint} error={error}>
            {({ id, describedBy, invalid }) => (
              <textarea
                id={id}
                aria-describedby={describedBy}
                aria-invalid={invalid || undefined}
                maxLength={schema.maxLength}
                value={String(value ?? '')}
                onInput={(e) => onValue(e.currentTarget.value)}
              />
            )}
          </Field>
        )
      return (
        <TextField
          label={label}
          hint={hint}
          error={error}
          maxLength={schema.maxLength}
          value={String(value ?? '')}
          onValue={(v) => onValue(kind.nullable && v === '' ? null : v)}
        />
      )
    case 'choice': {
      const options = kind.options.map((o) => ({ value: String(o), label: String(o) }))
      const all = kind.nullable ? [{ value: '', label: 'None' }, ...options] : options
      return (
        <SelectField
          label={label}
          hint={hint}
          error={error}
          options={all}
          value={value === null || value === undefined ? '' : String(value)}
          onValue={(v) => onValue(v === '' ? null : kind.options.find((o) => String(o) === v))}
        />
      )
    }
    case 'boolean':
      return (
        <>
          <CheckboxField label={label} hint={hint} checked={Boolean(value)} onChecked={onValue} />
          {error && <p class="field-error">{error}</p>}
        </>
      )
    case 'number':
      return (
        <TextField
          label={label}
          hint={hint}
          error={error}
          type="number"
          inputMode="numeric"
          min={schema.minimum}
          max={schema.maximum}
          value={value === null || value === undefined ? '' : String(value)}
          onValue={(v) => onValue(v === '' ? (kind.nullable ? null : 0) : Number(v))}
        />
      )
    case 'list':
      return (
        <ListField
          label={label}
          schema={schema}
          item={kind.item}
          value={Array.isArray(value) ? (value as Values[]) : []}
          onValue={onValue}
          errors={errors}
          path={path}
        />
      )
    default:
      // A shape the console does not know how to edit: shown, and sent back unchanged.
      return (
        <p class="hint">
          {label}: <code>{JSON.stringify(value)}</code>
        </p>
      )
  }
}

function ListField({
  label,
  schema,
  item,
  value,
  onValue,
  errors,
  path,
}: {
  label: string
  schema: Schema
  item: Schema
  value: Values[]
  onValue: (value: unknown) => void
  errors: Record<string, string>
  path: string
}) {
  const blank = () =>
    Object.fromEntries(
      Object.entries(item.properties ?? {}).map(([n, p]) => [n, kindOf(p).kind === 'choice' ? (kindOf(p) as { options: unknown[] }).options[0] : '']),
    )
  const max = schema.maxItems ?? Infinity
  const min = schema.minItems ?? 0
  return (
    <fieldset>
      <legend>{label}</legend>
      {schema.description && <p class="hint">{schema.description}</p>}
      {errors[path] && <p class="field-error">{errors[path]}</p>}
      {value.map((entry, i) => (
        <fieldset>
          <legend>
            {label} {i + 1}
          </legend>
          <SchemaFields schema={item} values={entry} onValues={(v) => onValue(value.map((e, j) => (j === i ? v : e)))} errors={errors} path={`${path}.${i}`} />
          {value.length > min && (
            <button type="button" class="secondary small" onClick={() => onValue(value.filter((_, j) => j !== i))}>
              Remove {label.toLowerCase()} {i + 1}
            </button>
          )}
        </fieldset>
      ))}
      {value.length < max && (
        <button type="button" class="secondary small" onClick={() => onValue([...value, blank()])}>
          Add to {label.toLowerCase()}
        </button>
      )}
    </fieldset>
  )
}

/** A 400 validation_failed's issues by path, for showing each next to its field. */
export function issuesOf(details: unknown): Record<string, string> {
  const out: Record<string, string> = {}
  const issues = (details as { issues?: { path?: string; message?: string }[] } | undefined)?.issues
  if (Array.isArray(issues)) for (const i of issues) if (i.path && i.message) out[i.path] = i.message
  return out
}
