// The bus across nodes on one PostgreSQL. A notice emitted on one node goes out on BUS_CHANNEL right after
// the commit that caused it; every other node's LISTEN connection hears it and tells its own listeners
// (its link cache, page cache, served domains, held forwarding polls). A node skips its own notices, which
// it has already told. A notice can be lost only if a node dies between its commit and the notice, or
// while a node's LISTEN connection is down: the reconnect resets every cache (caches.reset) and the caches'
// short TTLs bound what a lost notice can leave stale.
import type { SQL } from 'bun'
import { publishChange } from '../db/pg/notify'
import type { Logger } from '../platform/log'
import { BUS_CHANNEL, encodeNotice, type EventBus, type Notices } from './bus'

/** From now on the bus's notices are also sent to the other nodes. */
export function relayBusPg(bus: EventBus, sql: SQL, node: string, log: Logger) {
  bus.relayTo((name, notice) => {
    publishChange(sql, BUS_CHANNEL, encodeNotice(node, name, notice)).catch((err) =>
      log.warn('a notice could not be sent to the other nodes; their caches catch up within their TTL', { notice: name, error: (err as Error).message }),
    )
  })
}

/** A notice heard on BUS_CHANNEL, told to this node's listeners unless this node sent it. */
export function receiveBusNotice(bus: EventBus, node: string, payload: string, log: Logger) {
  let parsed: unknown
  try {
    parsed = JSON.parse(payload)
  } catch {
    parsed = null
  }
  if (!Array.isArray(parsed) || parsed.length !== 3 || typeof parsed[1] !== 'string') {
    log.warn('an unreadable notice from another node was dropped; resetting the caches', { payload: payload.slice(0, 100) })
    bus.emitLocal('caches.reset', {})
    return
  }
  const [origin, name, notice] = parsed as [string, keyof Notices, Notices[keyof Notices]]
  if (origin !== node) bus.emitLocal(name, notice)
}
