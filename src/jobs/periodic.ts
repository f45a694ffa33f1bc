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

export function startPeriodic(db: Db, tasks: PeriodicTask[], now: () => number, onTrigger: () => void): { stop(): void } {
  const crons = tasks.map(
    (task) =>
      new Cron(task.pattern, { timezone: 'UTC', protect: true, name: `lnk:${task.name}:${Math.random()}` }, () => {
        if (triggerPeriodic(db, task, now())) onTrigger()
      }),
  )
  return { stop: () => crons.forEach((c) => c.stop()) }
}
