// The recorder groups attempts into one transaction, waits out a busy database with timers, and keeps one
// refused attempt from failing the others of its group. A fake repo stands for the database here; the real
// one, with a real lock held by another connection, is in ../write-lock.test.ts.
import { expect, test } from 'bun:test'
import type { AttemptRecord, WebhooksRepo } from '../../../src/modules/webhooks/port'
import { AttemptRecorder } from '../../../src/modules/webhooks/recorder'

const AUTO_DISABLE = { failures: 20, afterMs: 1, reason: 'r' }
const busy = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })
const rec = (deliveryId: string) => ({ deliveryId, endpointId: 'whe_1', outcome: {}, now: 0, job: null }) as unknown as AttemptRecord

function fakeRepo(answer: (records: AttemptRecord[], call: number) => (boolean | null)[]) {
  const calls: string[][] = []
  const repo: Pick<WebhooksRepo, 'recordAttempts'> = {
    async recordAttempts(records) {
      calls.push(records.map((r) => r.deliveryId))
      return answer(records, calls.length)
    },
  }
  return { repo, calls }
}

test('attempts recorded together share one transaction, each answered its own result', async () => {
  const { repo, calls } = fakeRepo((records) => records.map((r) => (r.deliveryId === 'b' ? null : false)))
  const recorder = new AttemptRecorder(repo, AUTO_DISABLE)
  expect(await Promise.all([recorder.record(rec('a')), recorder.record(rec('b')), recorder.record(rec('c'))])).toEqual([false, null, false])
  expect(calls).toEqual([['a', 'b', 'c']])
})

test('a busy database is tried again after pauses; past the patience every attempt of the group is refused', async () => {
  const flaky = fakeRepo((records, call) => {
    if (call < 3) throw busy()
    return records.map(() => false)
  })
  const recorder = new AttemptRecorder(flaky.repo, AUTO_DISABLE, { firstPauseMs: 1, maxPauseMs: 1, giveUpAfterMs: 1000 })
  expect(await Promise.all([recorder.record(rec('a')), recorder.record(rec('b'))])).toEqual([false, false])
  expect(flaky.calls).toHaveLength(3)
  expect(recorder.busyAnswers).toBe(2)

  const locked = fakeRepo(() => {
    throw busy()
  })
  const impatient = new AttemptRecorder(locked.repo, AUTO_DISABLE, { firstPauseMs: 1, maxPauseMs: 1, giveUpAfterMs: 5 })
  const results = await Promise.allSettled([impatient.record(rec('a')), impatient.record(rec('b'))])
  expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
  expect(impatient.givenUp).toBe(1)
})

test('an attempt the database refuses fails alone: the others of its group are recorded one by one', async () => {
  const { repo, calls } = fakeRepo((records) => {
    if (records.some((r) => r.deliveryId === 'bad')) throw new Error('CHECK constraint failed')
    return records.map(() => false)
  })
  const recorder = new AttemptRecorder(repo, AUTO_DISABLE)
  const results = await Promise.allSettled([recorder.record(rec('a')), recorder.record(rec('bad')), recorder.record(rec('c'))])
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
  expect(calls).toEqual([['a', 'bad', 'c'], ['a'], ['bad'], ['c']])
  expect(recorder.givenUp).toBe(1)
})
