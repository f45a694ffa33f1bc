// /keys: every key of the workspace in the chosen mode, with what limits it and how it was used lately.
import { api, type Me } from '../../api'
import { href, navigate } from '../../router'
import { useSession } from '../../session'
import { useAsync } from '../../ui/async'
import { SelectField } from '../../ui/form'
import { Empty, Loaded } from '../../ui/states'
import type { ScreenProps } from '../types'
import { describeSchedule, STATUS_BADGE, statusOf, type ApiKey } from './model'
import { when } from './when'

export function permissionSummary(permissions: string[]): string {
  if (permissions.includes('*')) return 'All (*)'
  return permissions.join(', ')
}

function limits(key: ApiKey, usage: Me['usage'] | null): string[] {
  const out: string[] = []
  if (usage) out.push(`${usage.apiCalls} calls this month${usage.monthlyCallCap ? ` of ${usage.monthlyCallCap}` : ''}`)
  else if (key.monthlyCallCap) out.push(`cap ${key.monthlyCallCap} a month`)
  if (key.rateLimitOverride) out.push(`${key.rateLimitOverride} a minute`)
  if (key.allowedIps.length) out.push(`${key.allowedIps.length} address range${key.allowedIps.length === 1 ? '' : 's'}`)
  if (key.scopeFilters) out.push('scoped')
  if (key.schedule) out.push(describeSchedule(key.schedule))
  if (key.expiresAt) out.push(`expires ${when(key.expiresAt)}`)
  return out
}

export function KeyList({ query }: ScreenProps) {
  const session = useSession()
  const own = session.me.apiKey
  // A test key may only list test keys; a live key chooses (the address's text: the server refuses another).
  const mode = own.mode === 'test' ? 'test' : ((query.get('mode') ?? 'all') as 'live' | 'test' | 'all')
  const state = useAsync(
    () => Promise.all([api.get<'/api-keys'>('/api-keys', own.mode === 'test' ? undefined : { mode }), api.get<'/me'>('/me')]),
    [mode, own.mode],
  )
  return (
    <>
      <h1 tabIndex={-1}>API keys</h1>
      <div class="toolbar">
        {own.mode === 'live' && (
          <SelectField
            label="Show"
            value={mode}
            onValue={(m) => navigate('/keys', { mode: m === 'all' ? undefined : m })}
            options={[
              { value: 'all', label: 'Live and test keys' },
              { value: 'live', label: 'Live keys' },
              { value: 'test', label: 'Test keys' },
            ]}
          />
        )}
        {session.can('api_keys:write') && (
          <a class="button" href={href('/keys/new')}>
            New key
          </a>
        )}
      </div>
      <Loaded state={state} label="Loading keys…">
        {([keys, me]) =>
          keys.length === 0 ? (
            <Empty>No keys of this mode yet.</Empty>
          ) : (
            <div class="table-wrap">
              <table>
                <caption class="visually-hidden">API keys</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Status</th>
                    <th scope="col" class="hide-narrow">
                      Permissions
                    </th>
                    <th scope="col" class="hide-narrow">
                      Last used
                    </th>
                    <th scope="col" class="hide-narrow">
                      Usage and limits
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {keys.map((key) => {
                    const status = statusOf(key)
                    const mine = key.id === own.id
                    return (
                      <tr>
                        <td>
                          <a href={href(`/keys/${encodeURIComponent(key.id)}`)}>{key.name}</a>
                          {mine && <span class="badge ok key-this">this key</span>}
                          <br />
                          <code>{key.keyPrefix}…</code> <span class={`badge ${key.mode === 'test' ? 'test' : 'muted'}`}>{key.mode}</span>
                        </td>
                        <td>
                          <span class={`badge ${STATUS_BADGE[status]}`}>{status}</span>
                          {key.rotating && status === 'rotating' && <span class="hint"> {key.graceHoursRemaining} h left</span>}
                        </td>
                        <td class="hide-narrow">{permissionSummary(key.permissions)}</td>
                        <td class="hide-narrow">{key.lastUsedAt ? when(key.lastUsedAt) : 'never'}</td>
                        <td class="hide-narrow">{limits(key, mine ? (me.usage ?? null) : null).join('; ') || 'none'}</td>
                      </tr>
                    )
                  })}
                </tbody>
              </table>
            </div>
          )
        }
      </Loaded>
    </>
  )
}
