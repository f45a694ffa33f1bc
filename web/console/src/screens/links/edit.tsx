// Creating a link, and one link's page: its short URL, QR code, the form (read-only without links:write)
// and delete.
import { useState } from 'preact/hooks'
import { api, explain } from '../../api'
import { href, navigate } from '../../router'
import { useSession } from '../../session'
import { announce } from '../../ui/announce'
import { useAction, useAsync } from '../../ui/async'
import { ConfirmButton, CopyButton } from '../../ui/buttons'
import { Loaded } from '../../ui/states'
import type { ScreenProps } from '../types'
import { LinkFormView } from './form'
import { createBody, emptyForm, formOf, patchBody, type Link, type LinkForm } from './model'
import { QrPanel } from './qr'
import { TryVisit } from './try-visit'

const linkPath = (id: string) => `/links/${encodeURIComponent(id)}` as const

export function NewLink() {
  const { can } = useSession()
  const save = async (form: LinkForm) => {
    const link = await api.post<'/links'>('/links', createBody(form))
    announce(`Link ${link.shortUrl} created`)
    navigate(linkPath(link.id))
  }
  return (
    <>
      <h1 tabIndex={-1}>New link</h1>
      <p>
        <a href={href('/links')}>Back to links</a>
      </p>
      {can('links:write') ? (
        <LinkFormView initial={emptyForm()} mode="create" shortHost={location.host} onSave={save} />
      ) : (
        <p class="state error">This API key can only read links. Sign in with a key that has links:write to create one.</p>
      )}
    </>
  )
}

export function EditLink({ params }: ScreenProps) {
  const { can } = useSession()
  const state = useAsync(() => api.get<'/links/{id}'>(linkPath(params.id!)), [params.id])
  return (
    <>
      <h1 tabIndex={-1}>{state.data ? `Link ${state.data.slug}` : 'Link'}</h1>
      <p>
        <a href={href('/links')}>Back to links</a>
      </p>
      <Loaded state={state} label="Loading the link…">
        {(link) => <LinkPage link={link} canWrite={can('links:write')} />}
      </Loaded>
    </>
  )
}

function LinkPage({ link: loaded, canWrite }: { link: Link; canWrite: boolean }) {
  const [link, setLink] = useState(loaded)
  const remove = useAction(async () => {
    await api.del<'/links/{id}'>(linkPath(link.id))
    announce(`Link ${link.shortUrl} deleted`)
    navigate('/links')
  })
  const save = async (form: LinkForm) => {
    const body = patchBody(formOf(link), form)
    if (!Object.keys(body).length) return { note: 'Nothing changed.' }
    const updated = await api.patch<'/links/{id}'>(linkPath(link.id), body)
    setLink(updated)
    announce('Link saved')
    return { note: 'Saved.', next: formOf(updated) }
  }
  return (
    <>
      <section class="panel link-summary" aria-label="Short link">
        <p class="short-url big">
          <a href={link.shortUrl} target="_blank" rel="noopener noreferrer">
            {link.shortUrl}
          </a>{' '}
          <CopyButton text={link.shortUrl} label="Copy short URL" />
        </p>
        <p class="small-text destination">Goes to {link.destinationUrl}</p>
        <p>
          {link.totalClicks.toLocaleString()} clicks, {link.uniqueClicks.toLocaleString()} unique visitors ·{' '}
          <a href={href(`/analytics/links/${encodeURIComponent(link.id)}`)}>Analytics</a>
          {link.hasPassword && <span class="badge muted">Password</span>} {link.isTest && <span class="badge test">Test link</span>}{' '}
          {!link.isActive && <span class="badge bad">Inactive</span>} {link.isArchived && <span class="badge muted">Archived</span>}
        </p>
        <p class="hint">
          Created {new Date(link.createdAt).toLocaleString()}, last changed {new Date(link.updatedAt).toLocaleString()}
        </p>
      </section>
      <QrPanel link={link} />
      <h2>{canWrite ? 'Settings' : 'Settings (read only)'}</h2>
      <LinkFormView initial={formOf(link)} mode="edit" readOnly={!canWrite} hasPassword={link.hasPassword} shortHost={link.domain} onSave={save} />
      <TryVisit link={link} />
      {canWrite && (
        <section class="danger-zone" aria-label="Delete">
          <ConfirmButton label="Delete link" title="Delete this link?" confirmLabel="Delete" onConfirm={() => remove.run()}>
            <p>
              <code>{link.shortUrl}</code> stops working at once and its QR codes lead nowhere. This cannot be undone.
            </p>
          </ConfirmButton>
          {remove.error != null && (
            <p class="field-error" role="alert">
              {explain(remove.error)}
            </p>
          )}
        </section>
      )}
    </>
  )
}
