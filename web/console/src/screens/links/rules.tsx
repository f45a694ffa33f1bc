// The rule editor of the link form: ordered rules (the first that matches wins), each with a name, all/any,
// its conditions and where it sends. Each condition offers only the operators and values its field allows
// (contract 7.1); the server's issues land beside the input their path names.
import { announce } from '../../ui/announce'
import { RowControls } from '../../ui/row-controls'
import { ScopedInput, ScopedMultiSelect, ScopedSelect, ScopedTextArea } from '../../ui/scoped-field'
import {
  FIELDS,
  moved,
  newCondition,
  newRule,
  OP_LABELS,
  specOf,
  takesList,
  takesNoValue,
  withField,
  withOp,
  type ConditionDraft,
  type RuleDraft,
} from './routing-model'
import { timeZones } from './zones'

const MATCHES = [
  { value: 'all', label: 'All conditions hold' },
  { value: 'any', label: 'Any condition holds' },
]
const FIELD_CHOICES = FIELDS.map((f) => ({ value: f.field, label: f.label }))

export function RuleEditor({
  rules,
  onRules,
  errors,
  disabled,
}: {
  rules: RuleDraft[]
  onRules: (rules: RuleDraft[]) => void
  /** Issues by the path of the input they belong to (`routingRules.0.conditions.1.value`), or `routingRules`. */
  errors: Record<string, string>
  disabled?: boolean
}) {
  const setRule = (i: number, rule: RuleDraft) => onRules(rules.map((r, j) => (j === i ? rule : r)))
  const add = () => {
    onRules([...rules, newRule()])
    announce(`Rule ${rules.length + 1} added`)
    requestAnimationFrame(() => document.querySelectorAll<HTMLInputElement>('.rule-list > li .rule-name input')[rules.length]?.focus())
  }
  return (
    <fieldset class="routing">
      <legend>Routing rules</legend>
      <p class="hint">
        Checked from the top on every visit; the first rule that matches sends the visitor to its URL. Visitors no rule matches get a variant, or else the
        destination URL.
      </p>
      {errors.routingRules && <p class="field-error">{errors.routingRules}</p>}
      {rules.length > 0 && (
        <ol class="rule-list">
          {rules.map((rule, i) => (
            <li key={rule.key}>
              <RuleView
                rule={rule}
                index={i}
                count={rules.length}
                errors={errors}
                disabled={disabled}
                onRule={(r) => setRule(i, r)}
                onMove={(by) => onRules(moved(rules, i, by))}
                onRemove={() => {
                  onRules(rules.filter((_, j) => j !== i))
                  announce(`Rule ${i + 1} removed`)
                  requestAnimationFrame(() => document.getElementById('add-rule')?.focus())
                }}
              />
            </li>
          ))}
        </ol>
      )}
      {/* Read only (no links:write): the rules as they are, with nothing offered that would change them. */}
      {disabled && !rules.length && <p>No rules.</p>}
      {!disabled && (
        <button type="button" id="add-rule" class="secondary small" disabled={rules.length >= 50} onClick={add}>
          Add rule
        </button>
      )}
    </fieldset>
  )
}

function RuleView({
  rule,
  index,
  count,
  errors,
  disabled,
  onRule,
  onMove,
  onRemove,
}: {
  rule: RuleDraft
  index: number
  count: number
  errors: Record<string, string>
  disabled?: boolean
  onRule: (rule: RuleDraft) => void
  onMove: (by: -1 | 1) => void
  onRemove: () => void
}) {
  const at = `routingRules.${index}`
  const scope = `rule ${index + 1}`
  const set = <K extends keyof RuleDraft>(name: K, value: RuleDraft[K]) => onRule({ ...rule, [name]: value })
  const setCondition = (j: number, c: ConditionDraft) =>
    set(
      'conditions',
      rule.conditions.map((d, k) => (k === j ? c : d)),
    )
  return (
    <fieldset class="rule">
      <legend>
        Rule {index + 1}
        {rule.name.trim() ? `: ${rule.name.trim()}` : ''}
      </legend>
      <div class="form-grid">
        <ScopedInput
          class="rule-name"
          label="Name"
          scope={scope}
          value={rule.name}
          onValue={(v) => set('name', v)}
          error={errors[`${at}.name`]}
          disabled={disabled}
        />
        <ScopedSelect
          label="Send when"
          scope={scope}
          value={rule.match}
          onValue={(v) => set('match', v === 'any' ? 'any' : 'all')}
          options={MATCHES}
          error={errors[`${at}.match`]}
          disabled={disabled}
        />
      </div>
      {errors[`${at}.conditions`] && <p class="field-error">{errors[`${at}.conditions`]}</p>}
      <ol class="condition-list" aria-label={`Conditions of rule ${index + 1}`}>
        {rule.conditions.map((c, j) => (
          <li key={c.key}>
            <ConditionView
              condition={c}
              at={`${at}.conditions.${j}`}
              scope={`${scope}, condition ${j + 1}`}
              errors={errors}
              disabled={disabled}
              onCondition={(next) => setCondition(j, next)}
              onRemove={
                rule.conditions.length > 1
                  ? () => {
                      set(
                        'conditions',
                        rule.conditions.filter((_, k) => k !== j),
                      )
                      announce(`Condition ${j + 1} of rule ${index + 1} removed`)
                    }
                  : undefined
              }
            />
          </li>
        ))}
      </ol>
      {!disabled && (
        <button
          type="button"
          class="secondary small"
          disabled={rule.conditions.length >= 20}
          onClick={() => {
            set('conditions', [...rule.conditions, newCondition()])
            announce(`Condition ${rule.conditions.length + 1} added to rule ${index + 1}`)
          }}
        >
          Add condition<span class="visually-hidden"> to {scope}</span>
        </button>
      )}
      <ScopedInput
        label="Then send to"
        scope={scope}
        type="url"
        inputMode="url"
        placeholder="https://example.com/for-them"
        value={rule.destinationUrl}
        onValue={(v) => set('destinationUrl', v)}
        error={errors[`${at}.destinationUrl`]}
        disabled={disabled}
      />
      {!disabled && <RowControls index={index} count={count} noun={scope} onMove={onMove} onRemove={onRemove} />}
    </fieldset>
  )
}

function ConditionView({
  condition: c,
  at,
  scope,
  errors,
  disabled,
  onCondition,
  onRemove,
}: {
  condition: ConditionDraft
  at: string
  scope: string
  errors: Record<string, string>
  disabled?: boolean
  onCondition: (c: ConditionDraft) => void
  /** Absent for a rule's only condition: a rule needs one. */
  onRemove?: () => void
}) {
  const spec = specOf(c.field)
  const fields = FIELDS.some((f) => f.field === c.field) ? FIELD_CHOICES : [...FIELD_CHOICES, { value: c.field, label: c.field }]
  const set = <K extends keyof ConditionDraft>(name: K, value: ConditionDraft[K]) => onCondition({ ...c, [name]: value })
  const common = { scope, disabled }
  return (
    <div class="condition">
      <ScopedSelect label="Field" {...common} value={c.field} onValue={(v) => onCondition(withField(c, v))} options={fields} error={errors[`${at}.field`]} />
      {c.field === 'query' && (
        <ScopedInput label="Parameter name" {...common} value={c.queryName} onValue={(v) => set('queryName', v)} placeholder="utm_source" />
      )}
      <ScopedSelect
        label="Operator"
        {...common}
        value={c.op}
        onValue={(v) => onCondition(withOp(c, v))}
        options={(spec.ops.includes(c.op) ? spec.ops : [...spec.ops, c.op]).map((op) => ({ value: op, label: OP_LABELS[op] ?? op }))}
        error={errors[`${at}.op`]}
      />
      <ValueInput condition={c} error={errors[`${at}.value`]} scope={scope} disabled={disabled} set={set} />
      {onRemove && !disabled && (
        <button type="button" class="danger small remove-condition" onClick={onRemove}>
          Remove<span class="visually-hidden"> {scope}</span>
        </button>
      )}
    </div>
  )
}

function ValueInput({
  condition: c,
  error,
  scope,
  disabled,
  set,
}: {
  condition: ConditionDraft
  error?: string
  scope: string
  disabled?: boolean
  set: <K extends keyof ConditionDraft>(name: K, value: ConditionDraft[K]) => void
}) {
  const spec = specOf(c.field)
  const common = { scope, disabled, error, hint: spec.hint }
  if (takesNoValue(c.op)) return error ? <p class="field-error">{error}</p> : null
  if (spec.kind === 'choice' && spec.choices) {
    const choices = spec.choices()
    if (takesList(c.op)) {
      // A list box scrolls its choices out of sight: the chosen ones are named beneath it.
      const names = c.values.map((v) => choices.find((o) => o.value === v)?.label ?? v)
      const hint = names.length ? `Chosen: ${names.join(', ')}` : 'Ctrl or ⌘ with a click picks more than one'
      return <ScopedMultiSelect label="Values" {...common} hint={hint} values={c.values} onValues={(v) => set('values', v)} options={choices} />
    }
    return <ScopedSelect label="Value" {...common} value={c.value} onValue={(v) => set('value', v)} options={[{ value: '', label: 'Choose…' }, ...choices]} />
  }
  if (spec.kind === 'ip' && takesList(c.op))
    return <ScopedTextArea label="Addresses" {...common} hint={`${spec.hint}, one per line`} value={c.list} onValue={(v) => set('list', v)} />
  if (spec.kind === 'ip') return <ScopedInput label="Address" {...common} value={c.value} onValue={(v) => set('value', v)} placeholder="192.0.2.0/24" />
  if (spec.kind === 'time')
    return (
      <div class="time-value">
        <ScopedInput label="Date and time" {...common} type="datetime-local" value={c.value} onValue={(v) => set('value', v)} />
        <ScopedSelect label="Time zone" scope={scope} disabled={disabled} value={c.zone} onValue={(v) => set('zone', v)} options={timeZones()} />
      </div>
    )
  if (takesList(c.op)) return <ScopedInput label="Values" {...common} hint="Separated by commas" value={c.list} onValue={(v) => set('list', v)} />
  return <ScopedInput label="Value" {...common} value={c.value} onValue={(v) => set('value', v)} />
}
