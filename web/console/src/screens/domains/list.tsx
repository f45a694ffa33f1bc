// /domains: the workspace's custom domains with their states, and (with domains:write) a form to add one.
import { useState } from 'preact/hooks'
import { api, explain } from '../../api'
import { href, navigate } from '../../router'
import { useSession } from '../../session'
import { useAction, useAsync } from '../../ui/async'
import { TextField } from '../../ui/form'
import { Empty, Loaded } from '../../ui/states'
import { Badge, DNS, VERIFICATION } from './model'

export function DomainList() {
  const { can } = useSession()
  const state = useAsync(() => api.get<'/domains'>('/domains'), [])
  return (
    <>
      <h1 tabIndex={-1}>Domains</h1>
      <p class="hint">Serve short links and bridge pages on a domain of your own. lnk checks the DNS records you create and keeps checking them.</p>
      {can('domains:write') && <AddDomain />}
      <h2>Your domains</h2>
      <Loaded state={state} label="Loading domains…">
        {(domains) =>
          domains.length === 0 ? (
            <Empty>No custom domains yet. Short links use the shared domain until you add one.</Empty>
          ) : (
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Domain</th>
                    <th scope="col">Verification</th>
                    <th scope="col">DNS</th>
                    <th scope="col" class="hide-narrow">
                      Serving
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {domains.map((d) => (
                    <tr>
                      <td>
                        <a href={href(`/domains/${d.id}`)}>{d.unicodeDomain}</a>
                      </td>
                      <td>
                        <Badge state={VERIFICATION[d.verificationStatus]} label="Verification" />
                      </td>
                      <td>
                        <Badge state={DNS[d.dnsStatus]} label="DNS" />
                      </td>
                      <td class="hide-narrow">{d.served ? 'Yes' : 'No'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Loaded>
    </>
  )
}

function AddDomain() {
  const [domain, setDomain] = useState('')
  const add = useAction(async () => {
    const created = await api.post<'/domains'>('/domains', { domain: domain.trim() })
    navigate(`/domains/${created.id}`)
  })
  return (
    <form
      class="panel"
      aria-label="Add a domain"
      onSubmit={(e) => {
        e.preventDefault()
        void add.run()
      }}
    >
      <h2>Add a domain</h2>
      <TextField
        label="Domain"
        value={domain}
        onValue={setDomain}
        required
        autoComplete="off"
        placeholder="go.example.com"
        hint="A hostname you control, without https:// or a path. The next screen lists the DNS records to create."
        error={add.error ? explain(add.error) : null}
      />
      <button type="submit" disabled={add.busy}>
        {add.busy ? 'Adding…' : 'Add domain'}
      </button>
    </form>
  )
}
