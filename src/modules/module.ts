// What a feature module receives and what it gives back. Each area's index.ts has one factory,
// createXModule(platform, …the modules it uses), returning a Module; runtime.ts builds the platform, calls
// the factories in order and plugs what they return into the app, the job worker and the outbox. Nothing
// here knows any area.
import type { AnyElysia } from 'elysia'
import type { Store } from '../db/store'
import type { EventBus } from '../events/bus'
import type { EventDefinition } from '../events/catalogue'
import type { EventInterest } from '../events/interest'
import type { EventConsumer } from '../events/outbox'
import type { Metrics } from '../http/metrics'
import type { PeriodicTask } from '../jobs/periodic'
import type { JobQueue } from '../jobs/queue'
import type { JobHandler, Worker } from '../jobs/worker'
import type { Clock } from '../platform/clock'
import type { Config } from '../platform/config'
import type { Logger } from '../platform/log'

/** What every module may use: configuration, time, logs, the database connections, jobs, events, metrics. */
export interface Platform {
  /** Distinguishes runtimes in one process (tests build many); Elysia plugins are deduplicated by it. */
  instanceId: string
  config: Config
  clock: Clock
  log: Logger
  /** The database: SQLite or PostgreSQL, and its connections. Factories pick their repos by its engine. */
  store: Store
  /** Server-wide secrets, answered synchronously (read before the modules are built on PostgreSQL). */
  settings: SettingsRepo
  queue: JobQueue
  worker: Worker
  bus: EventBus
  /** Who listens for which events: areas that consume the outbox add to it, hot writers ask it. */
  interest: EventInterest
  metrics: Metrics
}

/**
 * Server-wide values generated once and kept in the database (the platform module's repo-settings.ts answers
 * it; its port-settings.ts names the secrets).
 */
export interface SettingsRepo {
  /**
   * The named secret, created on first use. Synchronous on purpose: modules read it while they are built,
   * which is synchronous, and hand it to the redirect path, which never awaits the database. SQLite answers
   * it at once; on PostgreSQL the secrets are read before (preloadSettings).
   */
  serverSecret(name: string, now: number): Buffer
}

export interface JobSpec {
  type: string
  run: JobHandler
  /** Slots of its own in the worker (see Worker.handle). */
  lane?: number
}

export interface Module {
  name: string
  /** Mounted under /v1 (or at the root with `root: true`). */
  routes?: AnyElysia
  root?: boolean
  /** Routes at the root beside a module's /v1 routes (what other hosts and local tools call). */
  rootRoutes?: AnyElysia
  /** The events this module publishes, with the schemas of their data: the runtime registers them with the outbox. */
  events?: readonly EventDefinition[]
  /** Outbox consumers: transaction bodies run inside the dispatch transaction. */
  consumers?: EventConsumer[]
  jobs?: JobSpec[]
  periodic?: PeriodicTask[]
  /**
   * What a module reads before it can answer, where the engine cannot read it while the module is built
   * (PostgreSQL: the served domains). The runtime awaits it before serving; SQLite modules read in the factory.
   */
  init?(): Promise<void>
  /** Starts timers and threads; called by startBackground, never by tests that only handle requests. */
  start?(): void
  /** Stops what start() began and writes what is held in memory. Modules close in reverse order. */
  close?(): Promise<void>
}

/** A module checked against the contract, keeping the type of what else it exposes (its ctx, repo…). */
export const defineModule = <T extends Module>(module: T): T => module
