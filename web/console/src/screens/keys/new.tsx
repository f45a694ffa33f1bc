// /keys/new: a key with its restrictions; the secret is shown here once and kept only in this screen's
// state, so leaving the screen forgets it.
import { useState } from 'preact/hooks'
import { api } from '../../api'
import { href, navigate } from '../../router'
import { useSession } from '../../session'
import { useAction } from '../../ui/async'
import { SecretOnce } from '../../ui/secret'
import { ErrorNotice } from '../../ui/states'
import { KeyFields } from './form'
import { createBody, emptyForm, fieldErrors, type CreateBody, type CreatedKey, type Fields, type KeyForm } from './model'

export function NewKey() {
  const session = useSession()
  const [form, setForm] = useState<KeyForm>(() => emptyForm(session.me.apiKey.mode))
  const [errors, setErrors] = useState<Fields>({})
  const [created, setCreated] = useState<CreatedKey | null>(null)
  const save = useAction((body: CreateBody) => api.post<'/api-keys'>('/api-keys', body))

  if (!session.can('api_keys:write')) {
    return (
      <>
        <h1 tabIndex={-1}>New API key</h1>
        <ErrorNotice error={new Error('This API key may not create keys: it lacks the api_keys:write permission. Sign in with a key that has it.')} />
      </>
    )
  }

  if (created) {
    return (
      <>
        <h1 tabIndex={-1}>Key “{created.name}” created</h1>
        <SecretOnce label="The new key" secret={created.key} onDone={() => navigate(`/keys/${encodeURIComponent(created.id)}`)} />
        <p>
          <a href={href(`/keys/${encodeURIComponent(created.id)}`)}>See the key's details</a> · <a href={href('/keys')}>All keys</a>
        </p>
      </>
    )
  }

  const submit = async (event: Event) => {
    event.preventDefault()
    const { body, problems } = createBody(form)
    setErrors(problems)
    if (Object.keys(problems).length) return
    const made = await save.run(body)
    if (made) setCreated(made)
  }
  // The action's error, split into the fields it names and the rest.
  const refused = save.error ? fieldErrors(save.error) : null
  const shown = { ...errors, ...(refused?.fields ?? {}) }
  const problem = refused?.general ?? null

  return (
    <>
      <h1 tabIndex={-1}>New API key</h1>
      <form onSubmit={submit} noValidate>
        <KeyFields form={form} set={(patch) => setForm({ ...form, ...patch })} errors={shown} creating />
        {Object.keys(shown).length > 0 && !problem && (
          <p class="field-error" role="alert">
            Some fields need attention; see the messages next to them.
          </p>
        )}
        {problem !== null && <ErrorNotice error={problem} />}
        <div class="actions">
          <button type="submit" disabled={save.busy}>
            {save.busy ? 'Creating…' : 'Create key'}
          </button>
          <a class="button secondary" href={href('/keys')}>
            Cancel
          </a>
        </div>
      </form>
    </>
  )
}
