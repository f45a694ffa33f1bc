// Form pieces only the link screens use: a labelled textarea, and the social card a link preview shows.
import { Field } from '../../ui/form'
import type { LinkForm } from './model'

export function TextArea({
  label,
  value,
  onValue,
  hint,
  error,
  rows = 3,
  disabled,
}: {
  label: string
  value: string
  onValue: (value: string) => void
  hint?: string
  error?: string | null
  rows?: number
  disabled?: boolean
}) {
  return (
    <Field label={label} hint={hint} error={error}>
      {({ id, describedBy, invalid }) => (
        <textarea
          id={id}
          rows={rows}
          disabled={disabled}
          aria-describedby={describedBy}
          aria-invalid={invalid || undefined}
          value={value}
          onInput={(e) => onValue(e.currentTarget.value)}
        />
      )}
    </Field>
  )
}

const hostOf = (url: string) => {
  try {
    return new URL(url).host
  } catch {
    return ''
  }
}

/**
 * What a social network's card of the link looks like, from the OG fields with the same fallbacks the
 * redirect's preview page uses (title and description). The image itself is not loaded: the console's CSP
 * allows no outside images, so the card names where it comes from.
 */
export function SocialCard({ form, shortHost }: { form: LinkForm; shortHost: string }) {
  const title = form.ogTitle.trim() || form.title.trim() || form.destinationUrl.trim() || 'Your link'
  const description = form.ogDescription.trim() || form.description.trim()
  const image = form.ogImageUrl.trim()
  const large = form.twitterCard !== 'summary'
  return (
    <figure class="social-preview">
      <figcaption>Social card preview</figcaption>
      <div class={`social-card${large ? ' large' : ''}`}>
        {image && (
          <div class="social-image" role="img" aria-label={`Image from ${hostOf(image) || 'the image URL'}`}>
            <span>{hostOf(image) || 'image'}</span>
          </div>
        )}
        <div class="social-text">
          <span class="social-host">{shortHost}</span>
          <strong>{title}</strong>
          {description && <span class="social-description">{description}</span>}
        </div>
      </div>
    </figure>
  )
}
