// Polls waiting for their session's first event. A poll waits here until the fan-out queues an event for
// its session (told on the bus after the dispatch commits), its wait runs out, or a newer poll of the same
// session releases it. Nothing reads the database in a loop.
export type WakeReason = 'queued' | 'timeout' | 'released'

export class Waiters {
  private readonly waiting = new Map<string, (reason: WakeReason) => void>()

  /** Waits up to `ms`; a poll already waiting for this session is released first. */
  wait(sessionId: string, ms: number): Promise<WakeReason> {
    this.waiting.get(sessionId)?.('released')
    return new Promise((resolve) => {
      const done = (reason: WakeReason) => {
        clearTimeout(timer)
        if (this.waiting.get(sessionId) === done) this.waiting.delete(sessionId)
        resolve(reason)
      }
      const timer = setTimeout(() => done('timeout'), ms)
      this.waiting.set(sessionId, done)
    })
  }

  /** A newer poll arrived: the one waiting answers now (with nothing). */
  release(sessionId: string) {
    this.waiting.get(sessionId)?.('released')
  }

  /** The server is stopping: every held poll answers now. */
  releaseAll() {
    for (const done of [...this.waiting.values()]) done('released')
  }

  wake(sessionId: string) {
    this.waiting.get(sessionId)?.('queued')
  }

  /** Notices may have been lost (PostgreSQL's reset): every held poll looks at its queue now. */
  wakeAll() {
    for (const done of [...this.waiting.values()]) done('queued')
  }

  /** Whether a poll of the session is held now. */
  holds(sessionId: string) {
    return this.waiting.has(sessionId)
  }

  get size() {
    return this.waiting.size
  }
}
