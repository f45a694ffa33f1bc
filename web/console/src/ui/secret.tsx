// A secret the server shows once (an API key, a signing secret): shown with a copy button and a plain
// warning, and never stored by the console.
import { CopyButton } from './buttons'

export function SecretOnce({ label, secret, onDone }: { label: string; secret: string; onDone?: () => void }) {
  return (
    <section class="secret" aria-label={label}>
      <h3>{label}</h3>
      <p>This is shown once. Copy it now and keep it somewhere safe: lnk stores only a hash and cannot show it again.</p>
      <p class="secret-value">
        <code>{secret}</code> <CopyButton text={secret} />
      </p>
      {onDone && (
        <button type="button" class="secondary" onClick={onDone}>
          I have saved it
        </button>
      )}
    </section>
  )
}
