// Records finished delivery attempts on the job worker's connection, many to a transaction. Attempts that
// finish within a few milliseconds are written together, each with the completion of its job: one write
// transaction for a group of deliveries instead of two per delivery. That connection never waits for
// the write lock, so a busy answer (the click writer holds the lock) is retried after a short pause with
// timers, never by blocking the thread; only the recording is retried, never the request already sent.
// When patience runs out the error reaches the job, whose lease brings the attempt back (sent again, with
// the same webhook-id): at least once, never lost.
import { DEFAULT_PATIENCE, isBusy, retryWhileBusy, type BusyPatience } from '../../jobs/busy'
import type { AttemptRecord, AutoDisable, WebhooksRepo } from './port'

/** Attempts per transaction at most, so the write lock is never held long. */
const MAX_BATCH = 256

/**
 * How long the first attempt of a group waits for others before the group is written. The request is over
 * and its slot already free by then, so only the recording waits: at maxConcurrent 1, ~4,000 deliveries/s
 * wrote a transaction each (~12 pages into the WAL per delivery, 180-200 µs of CPU each); grouped over 2 ms,
 * 150-160 µs and 5,000-5,600/s. At maxConcurrent 10 the answers that arrive together group anyway.
 */
const GROUP_WINDOW_MS = 2

interface Waiting {
  record: AttemptRecord
  resolve(disabled: boolean | null): void
  reject(err: unknown): void
}

export class AttemptRecorder {
  private waiting: Waiting[] = []
  private flushing = false
  /** Busy answers met so far (each followed by a pause and another try)… */
  busyAnswers = 0
  /** …and transactions that failed for good (their attempts' jobs fail, to be made again later). */
  givenUp = 0

  constructor(
    private readonly repo: Pick<WebhooksRepo, 'recordAttempts'>,
    private readonly autoDisable: AutoDisable,
    /** How long a transaction waits for the write lock; tests shorten it. */
    public patience: BusyPatience = DEFAULT_PATIENCE,
  ) {}

  /** Answers what WebhooksRepo.recordAttempt does, once the attempt is committed. */
  record(record: AttemptRecord): Promise<boolean | null> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ record, resolve, reject })
      if (!this.flushing) {
        this.flushing = true
        setTimeout(() => void this.flush(), GROUP_WINDOW_MS)
      }
    })
  }

  private write(records: AttemptRecord[]) {
    return retryWhileBusy(
      () => this.repo.recordAttempts(records, this.autoDisable),
      this.patience,
      () => this.busyAnswers++,
    )
  }

  private async flush() {
    try {
      // Bounded: each pass takes up to MAX_BATCH waiting attempts, and a pass ends (written or refused).
      while (this.waiting.length) {
        const batch = this.waiting.splice(0, MAX_BATCH)
        try {
          const results = await this.write(batch.map((w) => w.record))
          batch.forEach((w, i) => w.resolve(results[i]!))
        } catch (err) {
          if (isBusy(err) || batch.length === 1) {
            this.givenUp++
            for (const w of batch) w.reject(err)
            continue
          }
          // One attempt the database refuses must not take the others down with it: each on its own.
          for (const w of batch) {
            try {
              w.resolve((await this.write([w.record]))[0]!)
            } catch (one) {
              this.givenUp++
              w.reject(one)
            }
          }
        }
      }
    } finally {
      this.flushing = false
    }
  }
}
