// The variant editor of the link form: an A/B (or A/B/C…) split of the visitors no rule matched, each variant a
// URL and a weight; its share (weight over the sum) is shown as the weights change.
import { announce } from '../../ui/announce'
import { RowControls } from '../../ui/row-controls'
import { ScopedInput } from '../../ui/scoped-field'
import { formatShare, newVariant, shares, type VariantDraft } from './routing-model'

export function VariantEditor({
  variants,
  onVariants,
  errors,
  disabled,
}: {
  variants: VariantDraft[]
  onVariants: (variants: VariantDraft[]) => void
  /** Issues by the path of the input they belong to (`variants.1.weight`), or `variants`. */
  errors: Record<string, string>
  disabled?: boolean
}) {
  const split = shares(variants)
  const set = (i: number, v: VariantDraft) => onVariants(variants.map((w, j) => (j === i ? v : w)))
  const add = () => {
    // A split needs two: the first press makes both.
    const more = variants.length === 0 ? [newVariant(), newVariant()] : [newVariant()]
    onVariants([...variants, ...more])
    announce(`${more.length === 2 ? 'Variants 1 and 2' : `Variant ${variants.length + 1}`} added`)
    requestAnimationFrame(() => document.querySelectorAll<HTMLInputElement>('.variant-list .variant-url input')[variants.length]?.focus())
  }
  return (
    <fieldset class="routing">
      <legend>A/B variants</legend>
      <p class="hint">
        Visitors no rule matches are split between these URLs by weight. A visitor keeps the same variant while the list stays the same; no cookie is used.
      </p>
      {errors.variants && <p class="field-error">{errors.variants}</p>}
      {variants.length > 0 && (
        <ol class="variant-list">
          {variants.map((v, i) => {
            const scope = `variant ${i + 1}`
            return (
              <li key={v.key} class="variant">
                <ScopedInput
                  class="variant-url"
                  label={`Variant ${i + 1} URL`}
                  type="url"
                  inputMode="url"
                  placeholder="https://example.com/b"
                  value={v.destinationUrl}
                  onValue={(url) => set(i, { ...v, destinationUrl: url })}
                  error={errors[`variants.${i}.destinationUrl`]}
                  disabled={disabled}
                />
                <ScopedInput
                  class="variant-weight"
                  label="Weight"
                  scope={scope}
                  inputMode="numeric"
                  hint="1 to 100"
                  value={v.weight}
                  onValue={(weight) => set(i, { ...v, weight })}
                  error={errors[`variants.${i}.weight`]}
                  disabled={disabled}
                />
                <p class="variant-share">
                  Share{' '}
                  <output class="share" aria-label={`Share of variant ${i + 1}`}>
                    {formatShare(split[i] ?? null)}
                  </output>
                </p>
                {!disabled && (
                  <RowControls
                    index={i}
                    count={variants.length}
                    noun={scope}
                    onRemove={() => {
                      onVariants(variants.filter((_, j) => j !== i))
                      announce(`Variant ${i + 1} removed`)
                      requestAnimationFrame(() => document.getElementById('add-variant')?.focus())
                    }}
                  />
                )}
              </li>
            )
          })}
        </ol>
      )}
      {/* Read only (no links:write): the split as it is, with nothing offered that would change it. */}
      {disabled && !variants.length && <p>No variants.</p>}
      {!disabled && (
        <button type="button" id="add-variant" class="secondary small" disabled={variants.length >= 10} onClick={add}>
          Add variant
        </button>
      )}
    </fieldset>
  )
}
