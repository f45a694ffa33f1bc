// Every setting of lnk, in the order they are read: its key in the configuration, its LNK_* variable and
// --flag, its help, its default and its parser. The Config type is computed from this table.
import {
  boolean,
  certificateFile,
  cidrs,
  databaseUrl,
  directory,
  dnsServers,
  geoipDb,
  hostname,
  integer,
  listenHost,
  logLevel,
  origin,
  peerRanges,
  privateKeyFile,
  proxyHops,
  recordAddresses,
  addresses,
  redactUrl,
  shortDomains,
  tlsMode,
} from './parse'
import { SettingsTable, type Sources } from './table'

const TABLE = SettingsTable.start()
  .add({ key: 'port', env: 'LNK_PORT', flag: 'port', help: 'listen port', fallback: () => '8080', parse: integer(0, 65535) })
  .add({ key: 'host', env: 'LNK_HOST', flag: 'host', help: 'listen address', fallback: () => '0.0.0.0', parse: listenHost })
  .add({ key: 'dataDir', env: 'LNK_DATA_DIR', flag: 'data-dir', help: 'directory holding lnk.db (SQLite, WAL)', fallback: () => './data', parse: directory })
  .add({
    key: 'databaseUrl',
    env: 'LNK_DATABASE_URL',
    flag: 'database-url',
    help: 'postgres://user:password@host:5432/db runs on PostgreSQL (several nodes); empty keeps SQLite under the data directory',
    fallback: () => '',
    parse: databaseUrl,
    redact: redactUrl,
  })
  .add({
    key: 'databasePoolSize',
    env: 'LNK_DATABASE_POOL_SIZE',
    flag: 'database-pool-size',
    help: 'PostgreSQL connections per node (one more listens for notices); count nodes × (this + 1) against max_connections',
    fallback: () => '10',
    parse: integer(2, 1000),
  })
  // The spec's {base_url} is this origin plus /v1.
  .add({
    key: 'baseUrl',
    env: 'LNK_BASE_URL',
    flag: 'base-url',
    help: 'public origin of the API; {base_url} is this plus /v1',
    fallback: (earlier) => `http://localhost:${earlier.port ?? 8080}`,
    parse: origin,
  })
  .add({
    key: 'shortDomains',
    env: 'LNK_SHORT_DOMAINS',
    flag: 'short-domains',
    help: 'comma-separated shared pool of short domains (host or host:port)',
    fallback: (earlier) => new URL(earlier.baseUrl ?? 'http://localhost:8080').host,
    parse: shortDomains,
  })
  // 0: the client address is the socket's.
  .add({
    key: 'trustProxy',
    env: 'LNK_TRUST_PROXY',
    flag: 'trust-proxy',
    help: 'trusted proxy hops whose X-Forwarded-For is believed (off, on = 1, or a count)',
    fallback: () => 'off',
    parse: proxyHops,
  })
  .add({
    key: 'webhookAllowedCidrs',
    env: 'LNK_WEBHOOK_ALLOWED_CIDRS',
    flag: 'webhook-allowed-cidrs',
    help: 'comma-separated private ranges webhook targets may use (opt-in)',
    fallback: () => '',
    parse: cidrs,
  })
  .add({
    key: 'webhookAllowHttp',
    env: 'LNK_WEBHOOK_ALLOW_HTTP',
    flag: 'webhook-allow-http',
    help: 'allow plain-http webhook targets (opt-in)',
    fallback: () => 'false',
    parse: boolean,
  })
  .add({
    key: 'maxBodyBytes',
    env: 'LNK_MAX_BODY_BYTES',
    flag: 'max-body-bytes',
    help: 'largest request body accepted, in bytes',
    fallback: () => String(1024 * 1024),
    parse: integer(1024, 64 * 1024 * 1024),
  })
  .add({ key: 'logLevel', env: 'LNK_LOG_LEVEL', flag: 'log-level', help: 'debug, info, warn, error or silent', fallback: () => 'info', parse: logLevel })
  .add({
    key: 'shutdownTimeoutSeconds',
    env: 'LNK_SHUTDOWN_TIMEOUT_SECONDS',
    flag: 'shutdown-timeout',
    help: 'seconds in-flight work may take to finish on SIGTERM',
    fallback: () => '10',
    parse: integer(0, 300),
  })
  .add({
    key: 'jobLeaseSeconds',
    env: 'LNK_JOB_LEASE_SECONDS',
    flag: 'job-lease',
    help: "seconds a claimed job stays its worker's; a crashed node's jobs are taken again by another after this",
    fallback: () => '60',
    parse: integer(5, 3600),
  })
  .add({
    key: 'planLinksPerMonth',
    env: 'LNK_PLAN_LINKS_PER_MONTH',
    flag: 'plan-links-per-month',
    help: 'live links a workspace may create per month (0 = unlimited; test links never count)',
    fallback: () => '0',
    parse: integer(0, 1_000_000_000),
  })
  .add({
    key: 'geoipDb',
    env: 'LNK_GEOIP_DB',
    flag: 'geoip-db',
    help: 'an .mmdb IP database used instead of the embedded country one (a city database such as GeoLite2 City adds the city)',
    fallback: () => '',
    parse: geoipDb,
  })
  .add({
    key: 'clickRetentionDays',
    env: 'LNK_CLICK_RETENTION_DAYS',
    flag: 'click-retention-days',
    help: 'days raw clicks are kept before pruning (analytics rollups are kept for good)',
    fallback: () => '400',
    parse: integer(1, 36_500),
  })
  .add({
    key: 'webhookEgressIps',
    env: 'LNK_WEBHOOK_EGRESS_IPS',
    flag: 'webhook-egress-ips',
    help: 'comma-separated static outbound addresses of webhook deliveries, published by /v1/webhooks/info',
    fallback: () => '',
    parse: addresses,
  })
  // The PEM texts, read at start-up.
  .add({
    key: 'webhookClientCert',
    env: 'LNK_WEBHOOK_CLIENT_CERT',
    flag: 'webhook-client-cert',
    help: 'PEM file of the client certificate presented to webhook endpoints with mtlsEnabled',
    fallback: () => '',
    parse: certificateFile,
  })
  .add({
    key: 'webhookClientKey',
    env: 'LNK_WEBHOOK_CLIENT_KEY',
    flag: 'webhook-client-key',
    help: 'PEM file of the private key of LNK_WEBHOOK_CLIENT_CERT (both or neither)',
    fallback: () => '',
    parse: (raw, earlier) => privateKeyFile(raw, earlier.webhookClientCert),
  })
  .add({
    key: 'webhookCa',
    env: 'LNK_WEBHOOK_CA_FILE',
    flag: 'webhook-ca-file',
    help: 'PEM file of extra CA certificates trusted for webhook targets (private CAs)',
    fallback: () => '',
    parse: certificateFile,
  })
  .add({
    key: 'webhookMaxInFlight',
    env: 'LNK_WEBHOOK_MAX_IN_FLIGHT',
    flag: 'webhook-max-in-flight',
    help: 'webhook requests in flight at once across all endpoints',
    fallback: () => '32',
    parse: integer(1, 10_000),
  })
  .add({
    key: 'webhookRetentionDays',
    env: 'LNK_WEBHOOK_RETENTION_DAYS',
    flag: 'webhook-retention-days',
    help: 'days finished webhook deliveries (success or dead) and their attempts are kept',
    fallback: () => '30',
    parse: integer(1, 3_650),
  })
  .add({
    key: 'tlsMode',
    env: 'LNK_TLS_MODE',
    flag: 'tls-mode',
    help: 'external (a proxy of yours terminates TLS) or caddy (a local Caddy with on-demand TLS asks /internal/tls/ask)',
    fallback: () => 'external',
    parse: tlsMode,
  })
  // Loopback is always allowed besides these; the peers in them may ask /internal/tls/ask, and their
  // X-Forwarded-Proto counts for sslStatus.
  .add({
    key: 'tlsAskAllowedCidrs',
    env: 'LNK_TLS_ASK_ALLOWED_CIDRS',
    flag: 'tls-ask-allowed-cidrs',
    help: 'comma-separated ranges of a TLS proxy on other machines (one Caddy before several nodes) that may ask /internal/tls/ask; loopback always may',
    fallback: () => '',
    parse: peerRanges,
  })
  // null: A/AAAA records or the HTTP check decide.
  .add({
    key: 'domainCnameTarget',
    env: 'LNK_DOMAIN_CNAME_TARGET',
    flag: 'domain-cname-target',
    help: 'hostname custom subdomains point their CNAME at (shown to users as the record to create)',
    fallback: () => '',
    parse: hostname,
  })
  .add({
    key: 'domainIps',
    env: 'LNK_DOMAIN_IPS',
    flag: 'domain-ips',
    help: 'comma-separated addresses apex custom domains point their A/AAAA records at',
    fallback: () => '',
    parse: recordAddresses,
  })
  .add({
    key: 'dnsServers',
    env: 'LNK_DNS_SERVERS',
    flag: 'dns-servers',
    help: 'comma-separated DNS servers (host or host:port) that domain checks ask; empty = the system resolvers',
    fallback: () => '',
    parse: dnsServers,
  })
  .add({
    key: 'domainCheckPort',
    env: 'LNK_DOMAIN_CHECK_PORT',
    flag: 'domain-check-port',
    help: 'port of the plain-HTTP reachability check of custom domains (http://<domain>/.well-known/lnk/…)',
    fallback: () => '80',
    parse: integer(1, 65535),
  })

/** Every setting, in the order they are read. */
export const SETTINGS = TABLE.settings

type Flat<T> = { [K in keyof T]: T[K] }

/** The configuration: each setting's key with its parser's result. */
export type Config = Flat<ReturnType<typeof TABLE.read>>

export const readSettings = (sources: Sources): Config => TABLE.read(sources)
