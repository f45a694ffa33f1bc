// Periodic triggers. croner only decides *when*; each tick enqueues a durable job (deduplicated by a
// unique key per task) and the worker does the work, so a slow or crashed run is retried like any job.
// With several nodes on one PostgreSQL every node runs the same triggers, and only the holder of the sweep
// lock (sweep-lock-pg.ts) enqueues; whichever worker claims the job then runs it, once.
import { Cron } from 'croner'
import type { Engine } from '../db/engine'
import { enqueuing, type EnqueueInput } from './queue'

/** Who may trigger: the node holding the sweep lock on PostgreSQL; anyone where one process serves. */
export interface TriggerGate {
  hold(): Promise<boolean>
}

export interface PeriodicTask {
  name: string
  /** Cron pattern, UTC. */
  pattern: string
  jobType: string
}

/** The job a task's tick enqueues: at most one waits per task (its unique key). */
export const periodicJob = (task: PeriodicTask): EnqueueInput => ({ type: task.jobType, uniqueKey: `periodic:${task.name}`, maxAttempts: 3 })

/** Enqueues the task's job unless one is already waiting (or another node holds `gate`); answers the job id or null. */
export async function triggerPeriodic(engine: Engine, task: PeriodicTask, now: number, gate?: TriggerGate): Promise<string | null> {
  if (gate && !(await gate.hold())) return null
  return engine.transaction((tx) => enqueuing(engine, tx, periodicJob(task), now))
}

type OnError = (task: PeriodicTask, err: unknown) => void
const logError: OnError = (task, err) => console.error(`periodic task ${task.name} could not be triggered:`, err)

export function startPeriodic(
  engine: Engine,
  tasks: PeriodicTask[],
  now: () => number,
  onTrigger: () => void,
  onError: OnError = logError,
  gate?: TriggerGate,
): { stop(): void } {
  return scheduleTriggers(tasks, (task) => triggerPeriodic(engine, task, now(), gate), onTrigger, onError)
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
