// Test PKI made at test time with the openssl CLI: a CA, a server certificate for the given names and
// addresses, and a client certificate, all signed by that CA.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface TestPki {
  ca: string
  serverCert: string
  serverKey: string
  clientCert: string
  clientKey: string
  /** A second CA's client certificate: valid PEM the server must still refuse. */
  strangerCert: string
  strangerKey: string
}

function openssl(dir: string, args: string[]) {
  const run = Bun.spawnSync(['openssl', ...args], { cwd: dir, stderr: 'pipe', stdout: 'pipe' })
  if (run.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${run.stderr.toString()}`)
}

function issue(dir: string, name: string, subject: string, ext: string, ca: string) {
  openssl(dir, ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject])
  writeFileSync(join(dir, `${name}.ext`), ext)
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${ca}.pem`,
    '-CAkey',
    `${ca}.key`,
    '-CAcreateserial',
    '-out',
    `${name}.pem`,
    '-days',
    '2',
    '-extfile',
    `${name}.ext`,
  ])
}

/** `sans` like ['DNS:hooks.example.test', 'IP:127.0.0.1']. */
export function makePki(sans: string[]): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'lnk-pki-'))
  try {
    for (const ca of ['ca', 'other-ca']) {
      openssl(dir, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${ca}.key`, '-out', `${ca}.pem`, '-days', '2', '-subj', `/CN=lnk ${ca}`])
    }
    issue(dir, 'server', '/CN=lnk test server', `subjectAltName=${sans.join(',')}\nextendedKeyUsage=serverAuth\n`, 'ca')
    issue(dir, 'client', '/CN=lnk test client', 'extendedKeyUsage=clientAuth\n', 'ca')
    issue(dir, 'stranger', '/CN=someone else', 'extendedKeyUsage=clientAuth\n', 'other-ca')
    const read = (f: string) => readFileSync(join(dir, f), 'utf8')
    return {
      ca: read('ca.pem'),
      serverCert: read('server.pem'),
      serverKey: read('server.key'),
      clientCert: read('client.pem'),
      clientKey: read('client.key'),
      strangerCert: read('stranger.pem'),
      strangerKey: read('stranger.key'),
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
