// Keeps lastUsedAt / lastUsedIp current without a database write on every request: at most one write per
// key per interval, the rest held in memory and written by flush() (timer and shutdown).
import type { IdentityRepo } from './port'
import { MINUTE_MS } from '../../platform/time'

export class LastUsedTracker {
  private pending = new Map<string, { at: number; ip: string | null }>()
  private written = new Map<string, number>()

  constructor(
    private repo: IdentityRepo,
    private intervalMs = MINUTE_MS,
  ) {}

  async touch(keyId: string, at: number, ip: string | null) {
    const last = this.written.get(keyId)
    if (last === undefined || at - last >= this.intervalMs) {
      this.written.set(keyId, at)
      this.pending.delete(keyId)
      await this.repo.writeLastUsed([{ keyId, at, ip }])
    } else {
      this.pending.set(keyId, { at, ip })
    }
  }

  /** The newest stamp, written or not, so reads are current too. */
  peek(keyId: string) {
    return this.pending.get(keyId)
  }

  async flush() {
    if (!this.pending.size) return
    const rows = [...this.pending].map(([keyId, v]) => ({ keyId, ...v }))
    this.pending.clear()
    for (const r of rows) this.written.set(r.keyId, r.at)
    await this.repo.writeLastUsed(rows)
  }
}
