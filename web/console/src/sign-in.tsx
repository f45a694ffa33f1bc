// Sign-in with an API key, checked with GET /v1/me before it is kept.
import { useState } from 'preact/hooks'
import { api, explain, type Me } from './api'

export function SignIn({ onSignedIn }: { onSignedIn: (key: string, me: Me) => void }) {
  const [key, setKey] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    const value = key.trim()
    if (!value) return setError('Paste an API key (it starts with lnk_live_ or lnk_test_).')
    setBusy(true)
    setError(null)
    try {
      onSignedIn(value, await api.me(value))
    } catch (err) {
      setError(explain(err))
    } finally {
      setBusy(false)
    }
  }
  return (
    <main id="main" class="sign-in">
      <h1>Sign in to lnk</h1>
      <p>
        Use an API key of your workspace. Create one with <code>lnk admin create-key</code> or from another signed-in console.
      </p>
      <form onSubmit={submit} noValidate>
        <div class={`field${error ? ' invalid' : ''}`}>
          <label for="api-key">API key</label>
          <input
            id="api-key"
            name="api-key"
            type="password"
            autoComplete="off"
            spellcheck={false}
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
            aria-describedby={error ? 'api-key-error api-key-hint' : 'api-key-hint'}
            aria-invalid={error ? true : undefined}
          />
          <p class="hint" id="api-key-hint">
            The key stays in this browser tab only (session storage) and is sent to this server alone.
          </p>
          {error && (
            <p class="field-error" id="api-key-error" role="alert">
              {error}
            </p>
          )}
        </div>
        <button type="submit" disabled={busy}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
    </main>
  )
}
