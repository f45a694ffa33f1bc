// The test PKI of test/net/_tls.ts (made with openssl at test time) as files, since lnk reads its client
// certificate, key and extra CAs from paths (LNK_WEBHOOK_CLIENT_CERT, _KEY, _CA_FILE). Nothing is checked in.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers'
import { makePki as makePems } from '../net/_tls'

export interface TestPki {
  dir: string
  caCert: string
  serverCert: string
  serverKey: string
  clientCert: string
  clientKey: string
  /** A client pair from another CA: the receiver must refuse it. */
  strangerCert: string
  strangerKey: string
}

/** Paths of PEM files: a server certificate for 127.0.0.1 and localhost, and client pairs. */
export function makePki(): TestPki {
  const pems = makePems(['IP:127.0.0.1', 'DNS:localhost'])
  const dir = tempDir('lnk-pki-')
  const file = (name: string, pem: string) => {
    writeFileSync(join(dir, name), pem)
    return join(dir, name)
  }
  return {
    dir,
    caCert: file('ca.pem', pems.ca),
    serverCert: file('server.pem', pems.serverCert),
    serverKey: file('server.key', pems.serverKey),
    clientCert: file('client.pem', pems.clientCert),
    clientKey: file('client.key', pems.clientKey),
    strangerCert: file('stranger.pem', pems.strangerCert),
    strangerKey: file('stranger.key', pems.strangerKey),
  }
}
