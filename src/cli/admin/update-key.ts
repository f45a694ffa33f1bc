// `lnk admin update-key`: a key's settings (spec 2.7) from flags; "none" clears one.
import { type KeySettings, updateApiKey } from '../../modules/api-keys'
import { parseGrants } from '../../modules/identity'
import { type Values, UsageError } from '../command'
import { type AdminCommand, str, wholeNumber, withRuntime } from './shared'

const list = (raw: string) =>
  raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)

/** The flags as the settings the API takes; "none" clears. */
function keySettingsFromFlags(values: Values): KeySettings {
  const out: KeySettings = {}
  const none = (v: unknown) => v === 'none'
  if (str(values.name) !== undefined) out.name = str(values.name)
  if (str(values.permissions) !== undefined) {
    try {
      out.permissions = parseGrants(str(values.permissions)!)
    } catch (err) {
      throw new UsageError((err as Error).message)
    }
  }
  if (str(values['allowed-ips']) !== undefined) out.allowedIps = none(values['allowed-ips']) ? [] : list(str(values['allowed-ips'])!)
  const domains = str(values['scope-domains'])
  const tags = str(values['scope-tags'])
  const folders = str(values['scope-folders'])
  if (domains !== undefined || tags !== undefined || folders !== undefined) {
    const d = domains && !none(domains) ? list(domains) : undefined
    const t = tags && !none(tags) ? list(tags) : undefined
    const f = folders && !none(folders) ? list(folders) : undefined
    out.scopeFilters = d || t || f ? { ...(d ? { domains: d } : {}), ...(t ? { tags: t } : {}), ...(f ? { folders: f } : {}) } : null
  }
  if (str(values.schedule) !== undefined) {
    if (none(values.schedule)) out.schedule = null
    else {
      try {
        const s = JSON.parse(str(values.schedule)!)
        const ok =
          s &&
          typeof s.timezone === 'string' &&
          Array.isArray(s.days) &&
          s.days.every((d: unknown) => Number.isInteger(d) && (d as number) >= 0 && (d as number) <= 6) &&
          Number.isInteger(s.startMinute) &&
          Number.isInteger(s.endMinute) &&
          s.startMinute >= 0 &&
          s.startMinute <= 1439 &&
          s.endMinute >= 0 &&
          s.endMinute <= 1440
        if (!ok) throw new Error('shape')
        out.schedule = { timezone: s.timezone, days: s.days, startMinute: s.startMinute, endMinute: s.endMinute }
      } catch {
        throw new UsageError('--schedule must be JSON like {"timezone":"Europe/Berlin","days":[1,2,3,4,5],"startMinute":480,"endMinute":1080}')
      }
    }
  }
  if (values['monthly-call-cap'] !== undefined)
    out.monthlyCallCap = none(values['monthly-call-cap']) ? null : wholeNumber('monthly-call-cap', values['monthly-call-cap'], 1, 1_000_000_000)
  if (values['rate-limit'] !== undefined)
    out.rateLimitOverride = none(values['rate-limit']) ? null : wholeNumber('rate-limit', values['rate-limit'], 1, 100_000)
  if (values['expires-at'] !== undefined) {
    if (none(values['expires-at'])) out.expiresAt = null
    else if (!Number.isFinite(Date.parse(str(values['expires-at'])!))) throw new UsageError('--expires-at must be an ISO 8601 timestamp')
    else out.expiresAt = new Date(Date.parse(str(values['expires-at'])!)).toISOString()
  }
  if (!Object.keys(out).length) throw new UsageError('name at least one setting to change')
  return out
}

export const updateKey: AdminCommand = {
  name: 'update-key',
  usage:
    'ID [--name N] [--permissions a,b] [--allowed-ips ip,cidr] [--scope-domains d] [--scope-tags t] [--scope-folders f] [--schedule JSON] ' +
    '[--monthly-call-cap N] ' +
    '[--rate-limit N] [--expires-at ISO] [--json]',
  summary: 'Change a key\'s settings; "none" clears a setting.',
  details: `Changes a key's settings (spec 2.7). Lists are comma-separated; "none" clears a setting.
  --name N                  a new name
  --permissions a,b         permission names or *
  --allowed-ips ip,cidr     IPv4/IPv6 addresses or CIDRs ("none": any address)
  --scope-domains d1,d2     scope filter: only links on these domains
  --scope-tags t1,t2        scope filter: only links carrying one of these tags
  --scope-folders f1,f2     scope filter: only links filed in one of these folders (fld_…)
                            (the scope is replaced by the lists given, each one required;
                            "none" on every list given clears the scope)
  --schedule JSON           e.g. '{"timezone":"Europe/Berlin","days":[1,2,3,4,5],"startMinute":480,"endMinute":1080}'
  --monthly-call-cap N      calls per UTC month
  --rate-limit N            requests per minute (replaces the default 600)
  --expires-at ISO          e.g. 2027-01-01T00:00:00Z`,
  options: {
    name: { type: 'string' },
    permissions: { type: 'string' },
    'allowed-ips': { type: 'string' },
    'scope-domains': { type: 'string' },
    'scope-tags': { type: 'string' },
    'scope-folders': { type: 'string' },
    schedule: { type: 'string' },
    'monthly-call-cap': { type: 'string' },
    'rate-limit': { type: 'string' },
    'expires-at': { type: 'string' },
    json: { type: 'boolean' },
  },
  positionals: 1,
  run: (c) =>
    withRuntime(c, async (rt) => {
      const key = await updateApiKey(rt.modules.apiKeys.ctx, null, c.positionals[0]!, keySettingsFromFlags(c.values))
      c.out(c.values.json === true ? JSON.stringify(key) : `Updated ${key.id} (${key.keyPrefix}…).`)
      return 0
    }),
}
