// Periodic triggers. croner only decides *when*; each tick enqueues a durable job (deduplicated by a
// unique key per task) and the worker does the work, so a slow or crashed run is retried like any job.
import { Cron } from 'croner'
import type { Db } from '../db/client'
import { enqueue, type EnqueueInput } from './queue'

export interface PeriodicTask {
  name: string
  /** Cron pattern, UTC. */
  pattern: string
  jobType: string
}

/** The job a task's tick enqueues: at most one waits per task (its unique key). */
export const periodicJob = (task: PeriodicTask): EnqueueInput => ({ type: task.jobType, uniqueKey: `periodic:${task.name}`, maxAttempts: 3 })

/** Enqueues the task's job unless one is already waiting; answers the job id or null. */
export function triggerPeriodic(db: Db, task: PeriodicTask, now: number): string | null {
  return enqueue(db, periodicJob(task), now)
}

type OnError = (task: PeriodicTask, err: unknown) => void
const logError: OnError = (task, err) => console.error(`periodic task ${task.name} could not be triggered:`, err)

export function startPeriodic(db: Db, tasks: PeriodicTask[], now: () => number, onTrigger: () => void, onError: OnError = logError): { stop(): void } {
  return scheduleTriggers(tasks, (task) => triggerPeriodic(db, task, now()), onTrigger, onError)
}

/**
 * Starts one croner job per task, calling `trigger` at each tick (onTrigger when it enqueued a job). A trigger
 * that fails (e.g. the database busy past its timeout) is passed to `onError` and tried again at the next
 * tick: croner does not catch, and an error escaping its timer callback would be an unhandled rejection,
 * which ends a Bun process.
 */
export function scheduleTriggers(
  tasks: PeriodicTask[],
  trigger: (task: PeriodicTask) => string | null | Promise<string | null>,
  onTrigger: () => void,
  onError: OnError = logError,
): { stop(): void } {
  const crons = tasks.map(
    (task) =>
      new Cron(task.pattern, { timezone: 'UTC', protect: true, name: `lnk:${task.name}:${Math.random()}` }, async () => {
        try {
          if (await trigger(task)) onTrigger()
        } catch (err) {
          onError(task, err)
        }
      }),
  )
  return { stop: () => crons.forEach((c) => c.stop()) }
}
