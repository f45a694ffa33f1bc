// Delivery slots on PostgreSQL: an endpoint's maxConcurrent counted across every node (DeliverySlots of
// port.ts). SQLite serves one process, whose in-memory counts (state.ts) are the whole count.
import type { SQL as BunSQL } from 'bun'
import type { DeliverySlots } from './port'

/** The first key of a delivery slot's advisory lock ("lnkw"); the second is the hash of endpoint and slot. */
const DELIVERY_SLOT_LOCK = 0x6c6e6b77

/**
 * Per-endpoint maxConcurrent across nodes. No row counts the requests in flight, and a slot must outlive
 * any transaction (the request goes out between the claim and the recording) yet be freed when its node
 * dies: slot i of an endpoint is a session-level advisory lock, taken without waiting
 * (pg_try_advisory_lock, atomic across nodes) on one connection this node keeps for them, and freed by
 * PostgreSQL itself when that connection ends. A session may take its own lock twice, so this node keeps
 * the slots it holds or is trying, and never tries one of them again. Two endpoints whose slot keys hash
 * alike share those slots: stricter, never looser. Per-process waiting and the total cap stay in memory
 * (state.ts); this is the count the nodes share.
 */
export async function createDeliverySlotsPg(client: BunSQL): Promise<DeliverySlots> {
  const conn = await client.reserve()
  const held = new Map<string, Set<number>>()
  const key = (endpointId: string, slot: number) => `${endpointId}/${slot}`
  return {
    async take(endpointId, max) {
      const mine = held.get(endpointId) ?? new Set<number>()
      held.set(endpointId, mine)
      for (let slot = 0; slot < max; slot++) {
        if (mine.has(slot)) continue
        // Marked before the await: a take of this node running meanwhile tries another slot.
        mine.add(slot)
        const [row] = await conn`SELECT pg_try_advisory_lock(${DELIVERY_SLOT_LOCK}::int, hashtext(${key(endpointId, slot)})) AS ok`
        if (row.ok) return slot
        mine.delete(slot)
      }
      if (!mine.size) held.delete(endpointId)
      return null
    },
    async release(endpointId, slot) {
      const mine = held.get(endpointId)
      if (!mine?.has(slot)) return
      await conn`SELECT pg_advisory_unlock(${DELIVERY_SLOT_LOCK}::int, hashtext(${key(endpointId, slot)}))`
      mine.delete(slot)
      if (!mine.size) held.delete(endpointId)
    },
    async close() {
      held.clear()
      // The connection goes back to the pool: its session must not keep the slots.
      await conn`SELECT pg_advisory_unlock_all()`
      conn.release()
    },
  }
}

/**
 * The slots of createDeliverySlotsPg, opened in init() (the factory cannot await its connection). Once
 * closing, no slot is taken (an attempt is put off instead) and those held are waited for, up to `patienceMs`,
 * before the connection that holds them goes: another node must not start a request while one of this
 * node's is still out.
 */
export function sharedSlots(sql: BunSQL, patienceMs: number): DeliverySlots & { open(): Promise<void> } {
  let inner: DeliverySlots | null = null
  let closing = false
  let held = 0
  return {
    async open() {
      inner ??= await createDeliverySlotsPg(sql)
    },
    async take(endpointId, max) {
      if (!inner || closing) return null
      // Counted from the try on: close() then waits for a take under way too.
      held++
      const slot = await inner.take(endpointId, max).catch((err) => {
        held--
        throw err
      })
      if (slot === null) held--
      return slot
    },
    async release(endpointId, slot) {
      held--
      await inner?.release(endpointId, slot)
    },
    async close() {
      closing = true
      const deadline = performance.now() + patienceMs
      while (held > 0 && performance.now() < deadline) await Bun.sleep(20)
      await inner?.close()
      inner = null
    },
  }
}
