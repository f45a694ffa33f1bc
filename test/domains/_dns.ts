// A loopback DNS server for the domain tests (not a test file itself): dns2 on 127.0.0.1, UDP and TCP on
// one port, answering from records the test sets. lnk is pointed at it with LNK_DNS_SERVERS (or a resolver
// built with setServers), so a test plays the customer's DNS provider without touching the system's.
//
// What the resolver sees mirrors a real authoritative answer:
// - a name with none of its records → NXDOMAIN; a name with records of other types only → NOERROR and no
//   answers. node:dns in Bun reports both as ENOTFOUND (Node: ENOTFOUND / ENODATA): "no record".
// - A/AAAA/TXT on a name that has a CNAME → the CNAME and then the target's records, as a recursive
//   resolver answers, so a resolve4 of a CNAME'd subdomain lands on the target's addresses.
// - fail(name, 'servfail') → SERVFAIL (ESERVFAIL); fail(name, 'timeout') → never answered (ETIMEOUT after
//   the resolver's own retries). Both are transient errors, never "no record".
import type { Socket } from 'node:net'
import dns2 from 'dns2'

const { Packet } = dns2

export type RecordType = 'TXT' | 'CNAME' | 'A' | 'AAAA'
export type Failure = 'servfail' | 'timeout'

export interface DnsServer {
  /** host:port, the form LNK_DNS_SERVERS and Resolver#setServers take. */
  address: string
  port: number
  /** Replaces the records of one type on `name` (an empty list removes them). A TXT value is one string. */
  set(name: string, type: RecordType, values: string[]): void
  /** Forgets every record of `name`, or of every name; failures too. */
  clear(name?: string): void
  /** Makes every query for `name` fail in the given way until called again with null. */
  fail(name: string, how: Failure | null): void
  /** Every question received, in order (names normalised). */
  queries: Array<{ name: string; type: string }>
  close(): Promise<void>
}

const TYPES: Record<RecordType, number> = { TXT: Packet.TYPE.TXT, CNAME: Packet.TYPE.CNAME, A: Packet.TYPE.A, AAAA: Packet.TYPE.AAAA }
const TYPE_NAMES = new Map<number, string>(Object.entries(Packet.TYPE).map(([name, code]) => [code as number, name]))
// Nothing may cache an answer (Bun's resolver does, for the TTL): a record a test changes is seen at once.
const TTL = 0
/** Longer than any real chain a test builds; stops a CNAME loop a test made by mistake. */
const MAX_CNAME_HOPS = 8

function normalise(name: string) {
  return name.toLowerCase().replace(/\.+$/, '')
}

export async function startDnsServer(): Promise<DnsServer> {
  const zone = new Map<string, Map<RecordType, string[]>>()
  const failures = new Map<string, Failure>()
  const queries: Array<{ name: string; type: string }> = []

  function resource(name: string, type: RecordType, value: string): Partial<dns2.Packet.Resource> {
    const base = { name, type: TYPES[type], class: Packet.CLASS.IN, ttl: TTL }
    if (type === 'TXT') return { ...base, data: value }
    if (type === 'CNAME') return { ...base, domain: value }
    return { ...base, address: value }
  }

  function answer(request: dns2.Packet): dns2.Packet {
    const response = Packet.createResponseFromRequest(request)
    response.header.aa = 1
    const [question] = request.questions
    if (!question) {
      response.header.rcode = Packet.RCODE.FORMERR
      return response
    }
    const wanted = TYPE_NAMES.get(question.type) as RecordType | undefined
    let name = normalise(question.name)
    for (let hop = 0; hop <= MAX_CNAME_HOPS; hop++) {
      const records = zone.get(name)
      if (!records || records.size === 0) {
        // The first name unknown: NXDOMAIN. A CNAME target we do not hold: the chain so far, as a
        // resolver gets when the target lives elsewhere and resolves to nothing.
        if (hop === 0) response.header.rcode = Packet.RCODE.NXDOMAIN
        return response
      }
      const own = wanted ? records.get(wanted) : undefined
      if (own?.length) {
        for (const value of own) response.answers.push(resource(name, wanted!, value) as dns2.Packet.Resource)
        return response
      }
      const alias = records.get('CNAME')?.[0]
      if (!alias || wanted === 'CNAME') return response
      response.answers.push(resource(name, 'CNAME', alias) as dns2.Packet.Resource)
      name = normalise(alias)
    }
    return response
  }

  const handle: dns2.DnsHandler = (request, send) => {
    const [question] = request.questions
    const name = question ? normalise(question.name) : ''
    if (question) queries.push({ name, type: TYPE_NAMES.get(question.type) ?? String(question.type) })
    const failure = failures.get(name)
    if (failure === 'timeout') return
    let response: dns2.Packet
    if (failure === 'servfail') {
      response = Packet.createResponseFromRequest(request)
      response.header.rcode = Packet.RCODE.SERVFAIL
    } else {
      response = answer(request)
    }
    // A client that gave up (a timeout test) may be gone by now.
    send(response).catch(() => {})
  }

  // Another process may hold the TCP side of the port UDP got: then start over on a fresh one.
  let lastError: unknown
  for (let attempt = 0; attempt < 5; attempt++) {
    const udp = dns2.createUDPServer(handle)
    const tcp = dns2.createTCPServer(handle)
    for (const server of [udp, tcp]) server.on('requestError', () => {})
    const sockets = new Set<Socket>()
    openSockets.set(tcp, sockets)
    tcp.on('connection', (socket: Socket) => {
      sockets.add(socket)
      socket.once('close', () => sockets.delete(socket))
    })
    try {
      const port = await listen(udp, tcp)
      return {
        address: `127.0.0.1:${port}`,
        port,
        queries,
        set(name, type, values) {
          const key = normalise(name)
          const records = zone.get(key) ?? new Map<RecordType, string[]>()
          if (values.length) records.set(type, [...values])
          else records.delete(type)
          if (records.size) zone.set(key, records)
          else zone.delete(key)
        },
        clear(name) {
          if (name === undefined) {
            zone.clear()
            failures.clear()
          } else {
            zone.delete(normalise(name))
            failures.delete(normalise(name))
          }
        },
        fail(name, how) {
          if (how) failures.set(normalise(name), how)
          else failures.delete(normalise(name))
        },
        close: () => close(udp, tcp),
      }
    } catch (err) {
      lastError = err
      await close(udp, tcp)
    }
  }
  throw lastError
}

const openSockets = new WeakMap<dns2.TCPServer, Set<Socket>>()

/**
 * Both listeners on 127.0.0.1 and one port (dns2's createServer().listen() would put TCP on ::): UDP
 * first, port 0 picks the port, then TCP on the same one.
 */
async function listen(udp: dns2.UDPServer, tcp: dns2.TCPServer): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    udp.once('error', reject)
    udp.bind(0, '127.0.0.1', () => {
      udp.off('error', reject)
      resolve()
    })
  })
  const port = udp.address().port
  await new Promise<void>((resolve, reject) => {
    tcp.once('error', reject)
    tcp.listen(port, '127.0.0.1', () => {
      tcp.off('error', reject)
      resolve()
    })
  })
  return port
}

async function close(udp: dns2.UDPServer, tcp: dns2.TCPServer) {
  // A client may keep its TCP connection open (dns2 holds one 10 s idle): close() must not wait for that.
  for (const socket of openSockets.get(tcp) ?? []) socket.destroy()
  await new Promise<void>((resolve) => {
    try {
      udp.close(() => resolve())
    } catch {
      resolve() // never bound
    }
  })
  if (tcp.listening) await new Promise<void>((resolve) => tcp.close(() => resolve()))
}
