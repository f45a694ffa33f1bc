// Periodic triggers. croner only decides *when*; each tick enqueues a durable job (deduplicated by a
// unique key per task) and the worker does the work, so a slow or crashed run is retried like any job.
import { Cron } from 'croner'
import type { Db } from '../db/client'
import { enqueue } from './queue'

export interface PeriodicTask {
  name: string
  /** Cron pattern, UTC. */
  pattern: string
  jobType: string
}

/** Enqueues the task's job unless one is already waiting; answers the job id or null. */
export function triggerPeriodic(db: Db, task: PeriodicTask, now: number): string | null {
  return enqueue(db, { type: task.jobType, uniqueKey: `periodic:${task.name}`, maxAttempts: 3 }, now)
}

/**
 * Starts one croner job per task. A trigger that fails (e.g. the database busy past its timeout) is passed to
 * `onError` and tried again at the next tick: croner does not catch, and an error escaping its timer
 * callback would be an unhandled rejection, which ends a Bun process.
 */
export function startPeriodic(
  db: Db,
  tasks: PeriodicTask[],
  now: () => number,
  onTrigger: () => void,
  onError: (task: PeriodicTask, err: unknown) => void = (task, err) => console.error(`periodic task ${task.name} could not be triggered:`, err),
): { stop(): void } {
  const crons = tasks.map(
    (task) =>
      new Cron(task.pattern, { timezone: 'UTC', protect: true, name: `lnk:${task.name}:${Math.random()}` }, () => {
        try {
          if (triggerPeriodic(db, task, now())) onTrigger()
        } catch (err) {
          onError(task, err)
        }
      }),
  )
  return { stop: () => crons.forEach((c) => c.stop()) }
}
