// A tiny MaxMind DB (.mmdb) writer for tests (not a test file itself): an IPv6 search tree with 24-bit
// records, IPv4 networks under ::/96, and the data types the enricher reads (maps, strings, unsigned
// integers, arrays). Enough to stand in for a city-level database such as GeoLite2 City.
import { isIP } from 'node:net'

type Value = string | number | Value[] | { [key: string]: Value }

function control(type: number, size: number): Buffer {
  const ext = type > 7
  const first = (ext ? 0 : type) << 5
  let head: number[]
  if (size < 29) head = [first | size]
  else if (size < 285) head = [first | 29, size - 29]
  else if (size < 65_821) head = [first | 30, (size - 285) >> 8, (size - 285) & 0xff]
  else throw new Error('value too large for this writer')
  if (ext) head.splice(1, 0, type - 7)
  return Buffer.from(head)
}

function encode(v: Value): Buffer {
  if (typeof v === 'string') {
    const bytes = Buffer.from(v, 'utf8')
    return Buffer.concat([control(2, bytes.length), bytes])
  }
  if (typeof v === 'number') {
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new Error('only uint32 numbers')
    const bytes: number[] = []
    for (let n = v; n > 0; n = Math.floor(n / 256)) bytes.unshift(n % 256)
    return Buffer.concat([control(v > 0xffff ? 6 : 5, bytes.length), Buffer.from(bytes)])
  }
  if (Array.isArray(v)) return Buffer.concat([control(11, v.length), ...v.map(encode)])
  const entries = Object.entries(v)
  return Buffer.concat([control(7, entries.length), ...entries.flatMap(([k, x]) => [encode(k), encode(x)])])
}

/** The 128 bits of an address; IPv4 sits under ::/96 as the format wants. */
function bits(ip: string): number[] {
  let bytes: number[]
  if (isIP(ip) === 4) bytes = [...Array(12).fill(0), ...ip.split('.').map(Number)]
  else {
    const [head, tail] = ip.split('::') as [string, string | undefined]
    const h = head ? head.split(':') : []
    const t = tail ? tail.split(':') : []
    const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t]
    bytes = groups.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff])
  }
  return bytes.flatMap((b) => Array.from({ length: 8 }, (_, i) => (b >> (7 - i)) & 1))
}

interface Node {
  kids: [Node | number | null, Node | number | null]
  id?: number
}

/**
 * Builds an .mmdb: `networks` maps "address/prefix" (IPv4 prefixes count IPv4 bits) to the record looked
 * up for every address inside it.
 */
export function buildMmdb(networks: Record<string, { [key: string]: Value }>, databaseType = 'Test-City'): Buffer {
  const data: Buffer[] = []
  let dataSize = 0
  const root: Node = { kids: [null, null] }
  for (const [net, record] of Object.entries(networks)) {
    const [ip, len] = net.split('/') as [string, string]
    const prefix = Number(len) + (isIP(ip) === 4 ? 96 : 0)
    const offset = dataSize
    const bytes = encode(record)
    data.push(bytes)
    dataSize += bytes.length
    const path = bits(ip)
    let node = root
    for (let depth = 0; depth < prefix - 1; depth++) {
      const b = path[depth]!
      let next = node.kids[b]
      if (typeof next !== 'object' || next === null) {
        next = { kids: [null, null] }
        node.kids[b] = next
      }
      node = next
    }
    node.kids[path[prefix - 1]!] = offset
  }
  const nodes: Node[] = []
  const number = (n: Node) => {
    n.id = nodes.length
    nodes.push(n)
    for (const k of n.kids) if (k && typeof k === 'object') number(k)
  }
  number(root)
  const count = nodes.length
  const tree = Buffer.alloc(count * 6)
  nodes.forEach((n, i) => {
    n.kids.forEach((k, side) => {
      const value = k === null ? count : typeof k === 'number' ? count + 16 + k : k.id!
      tree.writeUIntBE(value, i * 6 + side * 3, 3)
    })
  })
  const metadata = encode({
    node_count: count,
    record_size: 24,
    ip_version: 6,
    database_type: databaseType,
    languages: ['en'],
    binary_format_major_version: 2,
    binary_format_minor_version: 0,
    build_epoch: 1_700_000_000,
    description: { en: 'lnk test database' },
  })
  return Buffer.concat([tree, Buffer.alloc(16), ...data, Buffer.from('ABCDEF4D61784D696E642E636F6D', 'hex'), metadata])
}
