// The real Caddy in front of lnk for the TLS tests (not a test file itself), run from the Caddyfile
// operators ship (deploy/Caddyfile), or from nodes.Caddyfile in front of several nodes, on loopback only.
//
// The shipped file is loaded by Caddy's own Caddyfile adapter (`caddy adapt`, LNK_PORT in its environment
// like an operator's), and only what a test cannot have from it is laid over the resulting JSON config —
// the same settings the global options `http_port`, `https_port`, `default_bind 127.0.0.1`, `local_certs`,
// `skip_install_trust`, `storage` and `admin off` would give. They cannot be written in Caddyfile form
// around the shipped file: a Caddyfile has one global options block and it must come first, so a wrapper
// that imports the shipped file cannot add global options of its own. So:
// - ports: two free loopback ports, never 80/443 (a caddy service of Debian's package may hold those); a
//   site the Caddyfile itself binds to 127.0.0.1:<port> keeps that address;
// - certificates: Caddy's internal CA stands in for a public one (nothing leaves the machine); its root is
//   never installed into the system's trust store, the client of a test trusts it explicitly;
// - storage (certificates, the CA) and Caddy's own config/data dirs: a temp dir, removed by stop();
// - admin endpoint: off.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request as httpsRequest } from 'node:https'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../redirect/_server'

export const SHIPPED_CADDYFILE = join(import.meta.dir, '../../deploy/Caddyfile')

export const CADDY = ['/usr/bin/caddy'].find((p) => existsSync(p)) ?? Bun.which('caddy')

/** Fails (not skips) when Caddy is missing: CI installs it (test/setup/system-packages.ts). */
export function requireCaddy(): string {
  if (!CADDY) throw new Error('Caddy is not installed: run `apt-get install -y caddy` (CI installs it); the TLS tests need /usr/bin/caddy')
  return CADDY
}

export interface Caddy {
  httpPort: number
  httpsPort: number
  /** PEM of the internal CA's root: the only certificate a test's client trusts. */
  rootCaPem: string
  /** True when Caddy holds a certificate for `hostname` in its storage. */
  certificateIssuedFor(hostname: string): boolean
  /** What Caddy logged so far (for failure messages). */
  log(): string
  /** Kills Caddy and removes its temp dir; safe to call twice. */
  stop(): Promise<void>
}

export interface TestSettings {
  httpPort: number
  httpsPort: number
  storage: string
}

/** The shipped Caddyfile as Caddy's adapter reads it, for an lnk on `lnkPort`. */
export function adaptShippedCaddyfile(lnkPort: number, env: Record<string, string> = {}): any {
  return adaptCaddyfile(SHIPPED_CADDYFILE, { ...env, LNK_PORT: String(lnkPort) })
}

/** A Caddyfile as Caddy's adapter reads it, with `env` in Caddy's environment (its {$VARIABLES}). */
export function adaptCaddyfile(file: string, env: Record<string, string> = {}): any {
  const run = Bun.spawnSync([requireCaddy(), 'adapt', '--adapter', 'caddyfile', '--config', file], {
    env: { ...process.env, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  if (run.exitCode !== 0) throw new Error(`caddy adapt ${file} failed (exit ${run.exitCode}):\n${run.stderr.toString()}`)
  return JSON.parse(run.stdout.toString())
}

/** Lays the test settings (see the file comment) over an adapted config; throws on a shape it does not know. */
export function withTestSettings(config: any, settings: TestSettings): any {
  const out = structuredClone(config)
  const http = out.apps?.http
  const policies = out.apps?.tls?.automation?.policies
  if (!http?.servers || !Array.isArray(policies)) throw new Error(`unexpected adapted config: ${JSON.stringify(config)}`)
  out.admin = { disabled: true }
  out.storage = { module: 'file_system', root: settings.storage }
  http.http_port = settings.httpPort
  http.https_port = settings.httpsPort
  const ports: Record<string, number> = { ':80': settings.httpPort, ':443': settings.httpsPort }
  for (const [name, server] of Object.entries<any>(http.servers)) {
    server.listen = server.listen.map((address: string) => {
      // A site the Caddyfile already binds to loopback (the load-balanced TLS question of nodes.Caddyfile).
      if (/^127\.0\.0\.1:\d+$/.test(address)) return address
      if (!(address in ports)) throw new Error(`server ${name} listens on ${address}; the test knows :80, :443 and 127.0.0.1:<port> only`)
      return `127.0.0.1:${ports[address]}`
    })
  }
  for (const policy of policies) policy.issuers = [{ module: 'internal' }]
  out.apps.pki = { certificate_authorities: { local: { install_trust: false } } }
  return out
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port })
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

/** Which Caddyfile: the shipped one in front of one lnk on 127.0.0.1:`lnkPort`, or another with its variables. */
export type CaddySite = { lnkPort: number } | { caddyfile: string; env: Record<string, string> }

/**
 * `caddy run` with the shipped Caddyfile in front of lnk on 127.0.0.1:`lnkPort` (or with `caddyfile`), once
 * it listens. `httpPort` fixes the plain-HTTP port (lnk's LNK_DOMAIN_CHECK_PORT has to name it before lnk
 * starts); otherwise both ports are picked free. `adjust` changes the JSON config last, for what one test
 * plays beyond the Caddyfile (it says what and why).
 */
export async function startCaddy(options: CaddySite & { httpPort?: number; timeoutMs?: number; adjust?: (config: any) => void }): Promise<Caddy> {
  const bin = requireCaddy()
  let lastError: unknown
  // Another process may take a probed port before Caddy binds it: then try fresh ports.
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(bin, options, options.httpPort ?? freePort(), options.timeoutMs ?? 20_000, options.adjust)
    } catch (err) {
      lastError = err
    }
  }
  throw lastError
}

async function startOnce(bin: string, site: CaddySite, httpPort: number, timeoutMs: number, adjust?: (config: any) => void): Promise<Caddy> {
  const dir = mkdtempSync(join(tmpdir(), 'lnk-caddy-'))
  const storage = join(dir, 'storage')
  const logFile = join(dir, 'caddy.log')
  let httpsPort = freePort()
  while (httpsPort === httpPort) httpsPort = freePort()
  // Caddy also writes to its config and data dirs (autosave.json, …): keep them in the temp dir too.
  const home = { HOME: dir, XDG_CONFIG_HOME: join(dir, 'config'), XDG_DATA_HOME: join(dir, 'data') }
  const adapted = 'lnkPort' in site ? adaptShippedCaddyfile(site.lnkPort, home) : adaptCaddyfile(site.caddyfile, { ...home, ...site.env })
  const config = withTestSettings(adapted, { httpPort, httpsPort, storage })
  adjust?.(config)
  const configFile = join(dir, 'caddy.json')
  writeFileSync(configFile, JSON.stringify(config, null, 2))

  const proc = Bun.spawn([bin, 'run', '--config', configFile], {
    env: { ...process.env, ...home },
    stdin: 'ignore',
    stdout: Bun.file(logFile),
    stderr: Bun.file(logFile),
  })
  // A test runner that dies mid-test must not leave Caddy behind.
  const killOnExit = () => proc.kill('SIGKILL')
  process.once('exit', killOnExit)
  const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '')
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    process.off('exit', killOnExit)
    proc.kill('SIGTERM')
    const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(5_000).then(() => false)])
    if (!exited) {
      proc.kill('SIGKILL')
      await proc.exited
    }
    rmSync(dir, { recursive: true, force: true })
  }

  try {
    const rootFile = join(storage, 'pki/authorities/local/root.crt')
    const deadline = Date.now() + timeoutMs
    let ready = false
    for (let i = 0; i < 1_000 && Date.now() < deadline && proc.exitCode === null; i++) {
      ready = existsSync(rootFile) && (await listening(httpsPort)) && (await listening(httpPort))
      if (ready) break
      await Bun.sleep(50)
    }
    if (!ready) {
      const why =
        proc.exitCode !== null
          ? `exited with ${proc.exitCode}`
          : `did not listen on 127.0.0.1:${httpPort} and :${httpsPort} with its CA root written within ${timeoutMs} ms`
      throw new Error(`caddy ${why}; its log:\n${log().split('\n').slice(-30).join('\n')}`)
    }
    const rootCaPem = readFileSync(rootFile, 'utf8')
    return {
      httpPort,
      httpsPort,
      rootCaPem,
      certificateIssuedFor: (hostname) => certificateFiles(storage).includes(hostname.toLowerCase()),
      log,
      stop,
    }
  } catch (err) {
    await stop()
    throw err
  }
}

/** Hostnames with a certificate in Caddy's storage (certificates/<issuer>/<host>/<host>.crt). */
function certificateFiles(storage: string): string[] {
  const root = join(storage, 'certificates')
  if (!existsSync(root)) return []
  const hosts: string[] = []
  for (const issuer of readdirSync(root)) {
    for (const host of readdirSync(join(root, issuer))) {
      if (existsSync(join(root, issuer, host, `${host}.crt`))) hosts.push(host)
    }
  }
  return hosts
}

export interface HttpsResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/**
 * GET https://`hostname``path` sent to 127.0.0.1:`port` (no DNS involved): SNI and Host are `hostname`, the
 * only trusted root is `ca`, and a redirect is answered as it is, never followed. Rejects with the TLS
 * error when the handshake fails (no certificate for the name, or one `ca` did not sign).
 */
export function httpsGet(
  hostname: string,
  port: number,
  path: string,
  ca: string,
  timeoutMs = 15_000,
  headers: Record<string, string> = {},
): Promise<HttpsResponse> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'GET',
        servername: hostname,
        headers: { ...headers, host: hostname },
        ca,
        agent: false,
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }))
        res.on('error', reject)
      },
    )
    req.on('timeout', () => req.destroy(new Error(`no answer from 127.0.0.1:${port} for ${hostname} within ${timeoutMs} ms`)))
    req.on('error', reject)
    req.end()
  })
}
