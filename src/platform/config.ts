// Environment + flags -> one validated, typed Config. Every setting is an LNK_* variable and the matching
// --flag on `serve`; a bad value stops start-up with one line that names it.
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { resolve } from 'node:path'
import { openGeoDb } from './geoip'
import { parseRange } from './ip'

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent'

export interface Config {
  port: number
  host: string
  dataDir: string
  /** Public origin of the API, without a trailing slash. The spec's {base_url} is `${baseUrl}/v1`. */
  baseUrl: string
  /** Shared pool of short domains (host or host:port), lower-cased. */
  shortDomains: string[]
  /** Number of trusted proxy hops in front of lnk; 0 = take the client address from the socket. */
  trustProxy: number
  webhookAllowedCidrs: string[]
  webhookAllowHttp: boolean
  /** Largest request body accepted, in bytes. */
  maxBodyBytes: number
  logLevel: LogLevel
  /** Seconds in-flight work may take to finish after SIGTERM/SIGINT. */
  shutdownTimeoutSeconds: number
  /** How long a claimed job is its worker's; a job whose worker died is taken again after it. */
  jobLeaseSeconds: number
  /** Live links a workspace may create per UTC month; 0 = unlimited. */
  planLinksPerMonth: number
  /** An .mmdb IP database read instead of the embedded country one (absolute path), or null. */
  geoipDb: string | null
  /** Days raw clicks are kept; hourly and daily rollups are kept for good. */
  clickRetentionDays: number
  /** Static outbound addresses of webhook deliveries, as announced by GET /v1/webhooks/info (empty: not pinned). */
  webhookEgressIps: string[]
  /** PEM client certificate and key presented to endpoints with mtlsEnabled (read at start-up), or null. */
  webhookClientCert: string | null
  webhookClientKey: string | null
  /** Extra PEM CA certificates trusted for webhook targets (private CAs), or null. */
  webhookCa: string | null
  /** Webhook requests in flight at once across all endpoints. */
  webhookMaxInFlight: number
  /** Days finished webhook deliveries (success or dead) are kept with their attempts. */
  webhookRetentionDays: number
  /** Who terminates TLS: a proxy of the operator's (external) or a local Caddy asking /internal/tls/ask. */
  tlsMode: 'external' | 'caddy'
  /**
   * Ranges (CIDRs; a bare address is /32 or /128) of the TLS proxy besides loopback, which is always
   * allowed: peers that may ask /internal/tls/ask and whose X-Forwarded-Proto counts for sslStatus.
   */
  tlsAskAllowedCidrs: string[]
  /** The hostname a custom subdomain's CNAME must point at, or null (then A/AAAA or the HTTP check decide). */
  domainCnameTarget: string | null
  /** The addresses an apex domain's A/AAAA records must all be among (empty: not checked that way). */
  domainIps: string[]
  /** DNS servers (host:port) domain checks ask; empty = the system's resolvers. */
  dnsServers: string[]
  /** Port of the plain-HTTP reachability check, http://<domain>:<port>/.well-known/lnk/<token>. */
  domainCheckPort: number
  /** postgres://… selects PostgreSQL (several nodes on one database); null keeps SQLite under dataDir. */
  databaseUrl: string | null
  /** Connections each node keeps open to PostgreSQL (plus one that listens for notices). */
  databasePoolSize: number
}

export class ConfigError extends Error {}

interface Setting {
  key: keyof Config
  env: string
  flag: string
  help: string
  /** Default as shown in help; may depend on settings read earlier. */
  fallback: (c: Partial<Config>) => string
  parse: (raw: string, c: Partial<Config>) => Config[keyof Config]
  /** How the raw value appears in error messages, when it may hold a secret. */
  redact?: (raw: string) => string
}

/** A connection URL as it may be shown: the password replaced, whatever else is wrong with it. */
export function redactUrl(raw: string): string {
  try {
    const url = new URL(raw)
    if (url.password) url.password = '***'
    return url.toString()
  } catch {
    // Unparseable: hide anything between "//user:" and "@", the usual place of a password.
    return raw.replace(/(\/\/[^/:@]*:)[^@/]*@/, '$1***@')
  }
}

function databaseUrl(raw: string): string | null {
  const v = raw.trim()
  if (!v) return null
  let url: URL
  try {
    url = new URL(v)
  } catch {
    throw new Error('must be a URL such as postgres://lnk:secret@db.internal:5432/lnk')
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') throw new Error('must start with postgres:// or postgresql:// (leave it unset for SQLite)')
  if (!url.hostname && !url.searchParams.get('host')) throw new Error('must name a host')
  if (url.pathname.length <= 1) throw new Error('must name a database (postgres://…/lnk)')
  return v
}

function integer(min: number, max: number) {
  return (raw: string) => {
    if (!/^\d+$/.test(raw.trim())) throw new Error(`must be a whole number from ${min} to ${max}`)
    const n = Number(raw)
    if (n < min || n > max) throw new Error(`must be a whole number from ${min} to ${max}`)
    return n
  }
}

function boolean(raw: string) {
  const v = raw.trim().toLowerCase()
  if (['1', 'true', 'yes', 'on'].includes(v)) return true
  if (['0', 'false', 'no', 'off', ''].includes(v)) return false
  throw new Error('must be true or false')
}

function list(raw: string) {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}

function origin(raw: string) {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new Error('must be an absolute http(s) URL such as https://lnk.example.com')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('must use http or https')
  if (url.pathname !== '/' || url.search || url.hash) throw new Error('must be an origin without path, query or fragment')
  return url.origin
}

const HOST_PORT = /^(?=.{1,253}(:\d{1,5})?$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*(:\d{1,5})?$/

export function isValidCidr(value: string): boolean {
  const [addr, bits, ...rest] = value.split('/')
  if (rest.length || !addr) return false
  const family = isIP(addr)
  if (!family) return false
  if (bits === undefined) return true
  if (!/^\d+$/.test(bits)) return false
  return Number(bits) <= (family === 4 ? 32 : 128)
}

export const SETTINGS: Setting[] = [
  { key: 'port', env: 'LNK_PORT', flag: 'port', help: 'listen port', fallback: () => '8080', parse: integer(0, 65535) },
  {
    key: 'host',
    env: 'LNK_HOST',
    flag: 'host',
    help: 'listen address',
    fallback: () => '0.0.0.0',
    parse: (raw) => {
      const v = raw.trim()
      if (v !== 'localhost' && !isIP(v)) throw new Error('must be an IP address or localhost')
      return v
    },
  },
  {
    key: 'dataDir',
    env: 'LNK_DATA_DIR',
    flag: 'data-dir',
    help: 'directory holding lnk.db (SQLite, WAL)',
    fallback: () => './data',
    parse: (raw) => {
      if (!raw.trim()) throw new Error('must not be empty')
      return resolve(raw.trim())
    },
  },
  {
    key: 'databaseUrl',
    env: 'LNK_DATABASE_URL',
    flag: 'database-url',
    help: 'postgres://user:password@host:5432/db runs on PostgreSQL (several nodes); empty keeps SQLite under the data directory',
    fallback: () => '',
    parse: databaseUrl,
    redact: redactUrl,
  },
  {
    key: 'databasePoolSize',
    env: 'LNK_DATABASE_POOL_SIZE',
    flag: 'database-pool-size',
    help: 'PostgreSQL connections per node (one more listens for notices); count nodes × (this + 1) against max_connections',
    fallback: () => '10',
    parse: integer(2, 1000),
  },
  {
    key: 'baseUrl',
    env: 'LNK_BASE_URL',
    flag: 'base-url',
    help: 'public origin of the API; {base_url} is this plus /v1',
    fallback: (c) => `http://localhost:${c.port ?? 8080}`,
    parse: origin,
  },
  {
    key: 'shortDomains',
    env: 'LNK_SHORT_DOMAINS',
    flag: 'short-domains',
    help: 'comma-separated shared pool of short domains (host or host:port)',
    fallback: (c) => new URL(c.baseUrl ?? 'http://localhost:8080').host,
    parse: (raw) => {
      const domains = list(raw.toLowerCase())
      if (!domains.length) throw new Error('must name at least one domain')
      for (const d of domains) if (!HOST_PORT.test(d)) throw new Error(`"${d}" is not a host or host:port`)
      return [...new Set(domains)]
    },
  },
  {
    key: 'trustProxy',
    env: 'LNK_TRUST_PROXY',
    flag: 'trust-proxy',
    help: 'trusted proxy hops whose X-Forwarded-For is believed (off, on = 1, or a count)',
    fallback: () => 'off',
    parse: (raw) => {
      const v = raw.trim().toLowerCase()
      if (['', 'off', 'false', 'no', '0'].includes(v)) return 0
      if (['on', 'true', 'yes'].includes(v)) return 1
      return integer(1, 10)(v)
    },
  },
  {
    key: 'webhookAllowedCidrs',
    env: 'LNK_WEBHOOK_ALLOWED_CIDRS',
    flag: 'webhook-allowed-cidrs',
    help: 'comma-separated private ranges webhook targets may use (opt-in)',
    fallback: () => '',
    parse: (raw) => {
      const cidrs = list(raw)
      for (const c of cidrs) if (!isValidCidr(c)) throw new Error(`"${c}" is not an IP address or CIDR`)
      return cidrs
    },
  },
  {
    key: 'webhookAllowHttp',
    env: 'LNK_WEBHOOK_ALLOW_HTTP',
    flag: 'webhook-allow-http',
    help: 'allow plain-http webhook targets (opt-in)',
    fallback: () => 'false',
    parse: boolean,
  },
  {
    key: 'maxBodyBytes',
    env: 'LNK_MAX_BODY_BYTES',
    flag: 'max-body-bytes',
    help: 'largest request body accepted, in bytes',
    fallback: () => String(1024 * 1024),
    parse: integer(1024, 64 * 1024 * 1024),
  },
  {
    key: 'logLevel',
    env: 'LNK_LOG_LEVEL',
    flag: 'log-level',
    help: 'debug, info, warn, error or silent',
    fallback: () => 'info',
    parse: (raw) => {
      const v = raw.trim().toLowerCase()
      if (!['debug', 'info', 'warn', 'error', 'silent'].includes(v)) throw new Error('must be debug, info, warn, error or silent')
      return v as LogLevel
    },
  },
  {
    key: 'shutdownTimeoutSeconds',
    env: 'LNK_SHUTDOWN_TIMEOUT_SECONDS',
    flag: 'shutdown-timeout',
    help: 'seconds in-flight work may take to finish on SIGTERM',
    fallback: () => '10',
    parse: integer(0, 300),
  },
  {
    key: 'jobLeaseSeconds',
    env: 'LNK_JOB_LEASE_SECONDS',
    flag: 'job-lease',
    help: 'seconds a claimed job stays its worker\'s; a crashed node\'s jobs are taken again by another after this',
    fallback: () => '60',
    parse: integer(5, 3600),
  },
  {
    key: 'planLinksPerMonth',
    env: 'LNK_PLAN_LINKS_PER_MONTH',
    flag: 'plan-links-per-month',
    help: 'live links a workspace may create per month (0 = unlimited; test links never count)',
    fallback: () => '0',
    parse: integer(0, 1_000_000_000),
  },
  {
    key: 'geoipDb',
    env: 'LNK_GEOIP_DB',
    flag: 'geoip-db',
    help: 'an .mmdb IP database used instead of the embedded country one (a city database such as GeoLite2 City adds the city)',
    fallback: () => '',
    parse: (raw) => {
      if (!raw.trim()) return null
      const path = resolve(raw.trim())
      // Opened once here so a wrong path stops start-up, not the first click flush.
      openGeoDb(path)
      return path
    },
  },
  {
    key: 'clickRetentionDays',
    env: 'LNK_CLICK_RETENTION_DAYS',
    flag: 'click-retention-days',
    help: 'days raw clicks are kept before pruning (analytics rollups are kept for good)',
    fallback: () => '400',
    parse: integer(1, 36_500),
  },
  {
    key: 'webhookEgressIps',
    env: 'LNK_WEBHOOK_EGRESS_IPS',
    flag: 'webhook-egress-ips',
    help: 'comma-separated static outbound addresses of webhook deliveries, published by /v1/webhooks/info',
    fallback: () => '',
    parse: (raw) => {
      const ips = list(raw)
      for (const ip of ips) if (!isIP(ip)) throw new Error(`"${ip}" is not an IP address`)
      return [...new Set(ips)]
    },
  },
  {
    key: 'webhookClientCert',
    env: 'LNK_WEBHOOK_CLIENT_CERT',
    flag: 'webhook-client-cert',
    help: 'PEM file of the client certificate presented to webhook endpoints with mtlsEnabled',
    fallback: () => '',
    parse: certificateFile,
  },
  {
    key: 'webhookClientKey',
    env: 'LNK_WEBHOOK_CLIENT_KEY',
    flag: 'webhook-client-key',
    help: 'PEM file of the private key of LNK_WEBHOOK_CLIENT_CERT (both or neither)',
    fallback: () => '',
    parse: (raw, c) => {
      if (!raw.trim()) {
        if (c.webhookClientCert) throw new Error('must be set when LNK_WEBHOOK_CLIENT_CERT is (both or neither)')
        return null
      }
      if (!c.webhookClientCert) throw new Error('needs LNK_WEBHOOK_CLIENT_CERT as well (both or neither)')
      const pem = readPem(raw.trim(), 'PRIVATE KEY')
      let key: KeyObject
      try {
        key = createPrivateKey(pem)
      } catch (err) {
        throw new Error(`holds no valid private key: ${(err as Error).message}`)
      }
      // A mismatched pair would only show as handshake failures on every mTLS delivery.
      if (!new X509Certificate(c.webhookClientCert).checkPrivateKey(key)) throw new Error('does not belong to the certificate of LNK_WEBHOOK_CLIENT_CERT')
      return pem
    },
  },
  {
    key: 'webhookCa',
    env: 'LNK_WEBHOOK_CA_FILE',
    flag: 'webhook-ca-file',
    help: 'PEM file of extra CA certificates trusted for webhook targets (private CAs)',
    fallback: () => '',
    parse: certificateFile,
  },
  {
    key: 'webhookMaxInFlight',
    env: 'LNK_WEBHOOK_MAX_IN_FLIGHT',
    flag: 'webhook-max-in-flight',
    help: 'webhook requests in flight at once across all endpoints',
    fallback: () => '32',
    parse: integer(1, 10_000),
  },
  {
    key: 'webhookRetentionDays',
    env: 'LNK_WEBHOOK_RETENTION_DAYS',
    flag: 'webhook-retention-days',
    help: 'days finished webhook deliveries (success or dead) and their attempts are kept',
    fallback: () => '30',
    parse: integer(1, 3_650),
  },
  {
    key: 'tlsMode',
    env: 'LNK_TLS_MODE',
    flag: 'tls-mode',
    help: 'external (a proxy of yours terminates TLS) or caddy (a local Caddy with on-demand TLS asks /internal/tls/ask)',
    fallback: () => 'external',
    parse: (raw) => {
      const v = raw.trim().toLowerCase()
      if (v !== 'external' && v !== 'caddy') throw new Error('must be external or caddy')
      return v
    },
  },
  {
    key: 'tlsAskAllowedCidrs',
    env: 'LNK_TLS_ASK_ALLOWED_CIDRS',
    flag: 'tls-ask-allowed-cidrs',
    help: 'comma-separated ranges of a TLS proxy on other machines (one Caddy before several nodes) that may ask /internal/tls/ask; loopback always may',
    fallback: () => '',
    parse: (raw) => {
      const cidrs = list(raw)
      // parseRange is what the peer check matches with: a value it cannot read must stop start-up here.
      for (const c of cidrs) if (!isValidCidr(c) || !parseRange(c)) throw new Error(`"${c}" is not an IP address or CIDR`)
      return [...new Set(cidrs)]
    },
  },
  {
    key: 'domainCnameTarget',
    env: 'LNK_DOMAIN_CNAME_TARGET',
    flag: 'domain-cname-target',
    help: 'hostname custom subdomains point their CNAME at (shown to users as the record to create)',
    fallback: () => '',
    parse: (raw) => {
      const v = raw.trim().toLowerCase().replace(/\.$/, '')
      if (!v) return null
      if (!HOST_PORT.test(v) || v.includes(':') || !v.includes('.')) throw new Error('must be a hostname such as cname.lnk.example.com')
      return v
    },
  },
  {
    key: 'domainIps',
    env: 'LNK_DOMAIN_IPS',
    flag: 'domain-ips',
    help: 'comma-separated addresses apex custom domains point their A/AAAA records at',
    fallback: () => '',
    parse: (raw) => {
      const ips = list(raw)
      for (const ip of ips) if (!isIP(ip)) throw new Error(`"${ip}" is not an IP address`)
      return [...new Set(ips.map((ip) => ip.toLowerCase()))]
    },
  },
  {
    key: 'dnsServers',
    env: 'LNK_DNS_SERVERS',
    flag: 'dns-servers',
    help: 'comma-separated DNS servers (host or host:port) that domain checks ask; empty = the system resolvers',
    fallback: () => '',
    parse: (raw) => {
      const servers = list(raw)
      for (const s of servers) if (!isDnsServer(s)) throw new Error(`"${s}" is not an IP address, IP:port or [IPv6]:port`)
      return servers
    },
  },
  {
    key: 'domainCheckPort',
    env: 'LNK_DOMAIN_CHECK_PORT',
    flag: 'domain-check-port',
    help: 'port of the plain-HTTP reachability check of custom domains (http://<domain>/.well-known/lnk/…)',
    fallback: () => '80',
    parse: integer(1, 65535),
  },
]

/** A DNS server as node:dns takes it: an address, address:port or [IPv6]:port. */
function isDnsServer(value: string): boolean {
  if (isIP(value)) return true
  const bracketed = /^\[([0-9a-fA-F:.]+)\]:(\d{1,5})$/.exec(value)
  if (bracketed) return isIP(bracketed[1]!) === 6 && Number(bracketed[2]) <= 65535
  const v4 = /^([0-9.]+):(\d{1,5})$/.exec(value)
  return !!v4 && isIP(v4[1]!) === 4 && Number(v4[2]) <= 65535
}

/** A PEM file of certificates, read and checked at start-up; null when the setting is empty. */
function certificateFile(raw: string): string | null {
  if (!raw.trim()) return null
  const pem = readPem(raw.trim(), 'CERTIFICATE')
  try {
    new X509Certificate(pem)
  } catch (err) {
    throw new Error(`holds no valid certificate: ${(err as Error).message}`)
  }
  return pem
}

/** Reads a PEM file at start-up, so a wrong path stops start-up instead of failing every delivery. */
function readPem(path: string, label: string): string {
  let text: string
  try {
    text = readFileSync(resolve(path), 'utf8')
  } catch (err) {
    throw new Error(`cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  if (!text.includes(`-----BEGIN `) || !text.includes(label)) throw new Error(`is not a PEM file holding a ${label}`)
  return text
}

/**
 * Reads every setting from flags (first) or the environment, falling back to defaults.
 * Throws ConfigError with one line naming the variable and what is wrong.
 */
export function loadConfig(env: Record<string, string | undefined>, flags: Record<string, string | boolean | undefined> = {}): Config {
  const config: Partial<Config> = {}
  for (const s of SETTINGS) {
    const flag = flags[s.flag]
    const fromFlag = flag === undefined ? undefined : flag === true ? 'true' : String(flag)
    const raw = fromFlag ?? env[s.env]
    const source = fromFlag !== undefined ? `--${s.flag}` : s.env
    const value = raw ?? s.fallback(config)
    try {
      ;(config as Record<string, unknown>)[s.key] = s.parse(value, config)
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err)
      throw new ConfigError(`invalid ${raw === undefined ? `default for ${s.env}` : source}=${JSON.stringify(s.redact ? s.redact(value) : value)}: ${why}`)
    }
  }
  return config as Config
}

/** parseArgs option table for the settings, so every command accepts them the same way. */
export function settingFlags(): Record<string, { type: 'string' }> {
  return Object.fromEntries(SETTINGS.map((s) => [s.flag, { type: 'string' as const }]))
}

export function settingsHelp(): string {
  return SETTINGS.map((s) => `  --${s.flag.padEnd(24)} ${s.env.padEnd(30)} ${s.help} (default ${s.fallback({}) || 'empty'})`).join('\n')
}
