// /domains/:id: one domain's states, the DNS records to create with what the last check saw, "Verify now"
// and delete (with domains:write).
import { useState } from 'preact/hooks'
import { api } from '../../api'
import { href, navigate } from '../../router'
import { useSession } from '../../session'
import { announce } from '../../ui/announce'
import { useAction, useAsync } from '../../ui/async'
import { ConfirmButton, CopyButton } from '../../ui/buttons'
import { CheckboxField } from '../../ui/form'
import { ErrorNotice, Loaded } from '../../ui/states'
import { Badge, DNS, SSL, VERIFICATION, when, type DnsRecord, type Domain } from './model'

export function DomainDetail({ params }: { params: Record<string, string> }) {
  const id = params.id!
  const state = useAsync(() => api.get<'/domains/{id}'>(`/domains/${encodeURIComponent(id)}`), [id])
  // The verify answer is the fresh record: shown at once, without a second request.
  const [checked, setChecked] = useState<Domain | null>(null)
  const domain = checked?.id === id ? checked : state.data
  return (
    <>
      <h1 tabIndex={-1}>{domain ? domain.unicodeDomain : 'Domain'}</h1>
      <p>
        <a href={href('/domains')}>All domains</a>
      </p>
      <Loaded state={{ ...state, data: domain } as typeof state} label="Loading the domain…">
        {(d) => <DomainView domain={d} onChecked={setChecked} />}
      </Loaded>
    </>
  )
}

function DomainView({ domain: d, onChecked }: { domain: Domain; onChecked: (d: Domain) => void }) {
  const { can } = useSession()
  const write = can('domains:write')
  const verify = useAction(async () => {
    const fresh = await api.post<'/domains/{id}/verify'>(`/domains/${encodeURIComponent(d.id)}/verify`)
    onChecked(fresh)
    announce(`Checked: ${VERIFICATION[fresh.verificationStatus][0]}, DNS ${DNS[fresh.dnsStatus][0].toLowerCase()}`)
  })
  return (
    <>
      <section class="panel domain-status" aria-labelledby="domain-status">
        <h2 id="domain-status">Status</h2>
        <dl class="domain-facts">
          <dt>Verification</dt>
          <dd>
            <Badge state={VERIFICATION[d.verificationStatus]} label="Verification" />
          </dd>
          <dt>DNS</dt>
          <dd>
            <Badge state={DNS[d.dnsStatus]} label="DNS" />
          </dd>
          <dt>Certificate</dt>
          <dd>
            <Badge state={SSL[d.sslStatus]} label="Certificate" />
          </dd>
          <dt>Serving short links</dt>
          <dd>{d.served ? 'Yes' : 'No'}</dd>
          <dt>Last checked</dt>
          <dd>{when(d.lastCheckedAt)}</dd>
          <dt>Next check</dt>
          <dd>{d.nextCheckAt ? when(d.nextCheckAt) : 'None scheduled'}</dd>
        </dl>
        {d.failureReason && (
          <p class="field-error" role="status">
            {d.failureReason}
          </p>
        )}
        {d.lookupErrors.length > 0 && (
          <div role="status">
            <p>Some lookups failed for a passing reason (the states did not change); lnk tries again later:</p>
            <ul>
              {d.lookupErrors.map((e) => (
                <li>
                  <code>{e}</code>
                </li>
              ))}
            </ul>
          </div>
        )}
        {d.httpCheck && (
          <p>
            HTTP check of <code>{d.httpCheck.url}</code>: {d.httpCheck.reached ? 'reached this server' : 'did not reach this server'} ({d.httpCheck.detail})
          </p>
        )}
        {write && (
          <div class="actions">
            <button type="button" onClick={() => void verify.run()} disabled={verify.busy}>
              {verify.busy ? 'Checking…' : 'Verify now'}
            </button>
          </div>
        )}
        {verify.error != null && <ErrorNotice error={verify.error} />}
      </section>
      <h2>DNS records to create</h2>
      <p class="hint">Create these at your DNS provider. "Seen" is what lnk found at its last check.</p>
      <Records records={d.records} />
      {write && <DeleteDomain domain={d} />}
    </>
  )
}

function seenText(r: DnsRecord) {
  if (r.seen === null) return 'Not looked yet (or the lookup failed)'
  if (r.seen.length === 0) return 'Nothing'
  return r.seen.join(', ')
}

function Records({ records }: { records: DnsRecord[] }) {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Type</th>
            <th scope="col">Name</th>
            <th scope="col">Expected value</th>
            <th scope="col">Seen</th>
            <th scope="col">Result</th>
          </tr>
        </thead>
        <tbody>
          {records.map((r) => (
            <tr>
              <td>{r.type}</td>
              <td>
                <code>{r.name}</code> <CopyButton text={r.name} label="Copy name" />
              </td>
              <td>
                <code>{r.value}</code> <CopyButton text={r.value} label="Copy value" />
              </td>
              <td>{r.seen === null ? <span class="hint">{seenText(r)}</span> : <code>{seenText(r)}</code>}</td>
              <td>
                {r.ok === null ? (
                  <span class="badge muted">Not checked</span>
                ) : r.ok ? (
                  <span class="badge ok">Matches</span>
                ) : (
                  <span class="badge bad">No match</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

function DeleteDomain({ domain }: { domain: Domain }) {
  const [archive, setArchive] = useState(false)
  const remove = useAction(async () => {
    const path = `/domains/${encodeURIComponent(domain.id)}${archive ? '?archiveLinks=true' : ''}` as const
    const answer = await api.del<'/domains/{id}'>(path)
    announce(`${domain.unicodeDomain} deleted${answer?.archivedLinks ? `; ${answer.archivedLinks} links archived` : ''}`)
    navigate('/domains')
  })
  return (
    <section aria-labelledby="domain-delete">
      <h2 id="domain-delete">Delete</h2>
      <p class="hint">Short links stop answering on this domain at once.</p>
      <ConfirmButton label="Delete domain" title={`Delete ${domain.unicodeDomain}?`} confirmLabel="Delete" onConfirm={() => remove.run()}>
        <p>Links on {domain.unicodeDomain} stop answering. A domain that still has links is only deleted if they are archived with it.</p>
        <CheckboxField
          label="Also archive its links"
          checked={archive}
          onChecked={setArchive}
          hint="Archived links keep their clicks and answer again if the domain is added and verified anew."
        />
      </ConfirmButton>
      {remove.error != null && <ErrorNotice error={remove.error} />}
    </section>
  )
}
