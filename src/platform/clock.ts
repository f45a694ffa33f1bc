// Time comes from here so tests can drive expiry, schedules, retries and rotation windows without sleeping.
export interface Clock {
  /** Epoch milliseconds. */
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** A clock that only moves when told to; for tests. */
export class ManualClock implements Clock {
  constructor(private ms: number = Date.UTC(2026, 0, 1)) {}
  now() {
    return this.ms
  }
  set(ms: number | Date) {
    this.ms = typeof ms === 'number' ? ms : ms.getTime()
  }
  advance(ms: number) {
    this.ms += ms
  }
}

export const iso = (ms: number) => new Date(ms).toISOString()
export const isoOrNull = (ms: number | null | undefined) => (ms == null ? null : iso(ms))

/** `YYYY-MM` of the UTC calendar month holding `ms`. */
export const utcMonth = (ms: number) => iso(ms).slice(0, 7)

/** Epoch ms at which the UTC calendar month after the one holding `ms` begins. */
export function startOfNextUtcMonth(ms: number) {
  const d = new Date(ms)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
}
