// The job worker's connection never waits for the write lock (busy_timeout 0): a write that finds another
// connection (the click writer, a request) holding it fails at once with SQLITE_BUSY. Waiting is done here
// instead, with timers, so the thread keeps serving requests while a background write waits its turn.

/** SQLite's answer when another connection holds the write lock and this one does not wait. */
export const isBusy = (err: unknown) =>
  (err as { code?: string } | null)?.code?.startsWith('SQLITE_BUSY') === true || /database is locked/.test((err as Error | null)?.message ?? '')

export interface BusyPatience {
  /** Pauses grow from firstPauseMs, doubling up to maxPauseMs… */
  firstPauseMs: number
  maxPauseMs: number
  /** …until the write has waited this long in total; then the SQLITE_BUSY error is thrown. */
  giveUpAfterMs: number
}

/** As patient as the request connection's busy_timeout (5 s), without blocking the thread meanwhile. */
export const DEFAULT_PATIENCE: BusyPatience = { firstPauseMs: 1, maxPauseMs: 50, giveUpAfterMs: 5000 }

/**
 * Runs `write` until it does not answer SQLITE_BUSY, pausing between tries; any other error, and the busy
 * error once patience runs out, is thrown. `onBusy` hears every busy answer (metrics, tests).
 */
export async function retryWhileBusy<T>(write: () => T | Promise<T>, patience: BusyPatience = DEFAULT_PATIENCE, onBusy?: () => void): Promise<T> {
  const giveUpAt = performance.now() + patience.giveUpAfterMs
  let pause = patience.firstPauseMs
  for (;;) {
    try {
      return await write()
    } catch (err) {
      if (!isBusy(err) || performance.now() + pause > giveUpAt) throw err
      onBusy?.()
      await Bun.sleep(pause)
      pause = Math.min(pause * 2, patience.maxPauseMs)
    }
  }
}
