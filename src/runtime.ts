// The one wiring place. A runtime is the platform (configuration, clock, log, the database connections, the
// job worker, the event bus, metrics) plus the feature modules, built in dependency order, plus one close().
// The server, the CLI and the tests all build it here, the same way.
import { openDatabase, prepareDataDir } from './db/client'
import { migrate } from './db/migrate'
import { EventBus } from './events/bus'
import { EventInterest } from './events/interest'
import { Metrics } from './http/metrics'
import { startPeriodic } from './jobs/periodic'
import { createJobQueue } from './jobs/queue'
import { Worker, type WorkerOptions } from './jobs/worker'
import { createAnalyticsModule } from './modules/analytics'
import { createApiKeysModule } from './modules/api-keys'
import { createClicksModule, type ClickWriterKind } from './modules/clicks'
import { createConsoleModule } from './modules/console'
import { createConversionsModule } from './modules/conversions'
import { createDomainsModule } from './modules/domains'
import { createAutomationsModule } from './modules/automations'
import { createForwardingModule } from './modules/forwarding'
import { createIdentityModule } from './modules/identity'
import { createLinksModule } from './modules/links'
import type { Module, Platform } from './modules/module'
import { createPlatformModule } from './modules/platform'
import { createPagesModule } from './modules/pages'
import { createQrModule } from './modules/qr'
import { createRedirectModule } from './modules/redirect'
import { createWebhooksModule } from './modules/webhooks'
import { systemClock, type Clock } from './platform/clock'
import { ConfigError, type Config } from './platform/config'
import { createLogger, type Logger } from './platform/log'
import { base62 } from './platform/random'

export interface RuntimeOptions {
  clock?: Clock
  log?: Logger
  worker?: WorkerOptions
  clickWriter?: ClickWriterKind
}

function createPlatform(config: Config, options: RuntimeOptions): Platform {
  const log = options.log ?? createLogger(config.logLevel)
  const clock = options.clock ?? systemClock
  if (config.databaseUrl) {
    // Schema and migrations exist for PostgreSQL (lnk migrate); the repos do not run on it yet (issue 18).
    throw new ConfigError('LNK_DATABASE_URL is set, but this build serves from SQLite only: `lnk migrate --database-url …` prepares a PostgreSQL database, serving from it is not finished (docs/scale-out.md). Unset LNK_DATABASE_URL to serve from SQLite.')
  }
  const db = openDatabase(prepareDataDir(config.dataDir), { cacheMb: 16 })
  try {
    const { applied } = migrate(db.sqlite)
    if (applied.length) log.info('migrations applied', { count: applied.length, latest: applied.at(-1) })
  } catch (err) {
    db.close()
    throw err
  }
  // The worker claims jobs and dispatches the outbox on a connection of its own that never waits for the
  // write lock, so background work cannot stall requests while the click writer holds it.
  const workerDb = openDatabase(db.path, { busyTimeoutMs: 0, cacheMb: 8 })
  return {
    instanceId: base62(12),
    config,
    clock,
    log,
    db,
    workerDb,
    queue: createJobQueue(db.db),
    worker: new Worker({ db: workerDb.db, queue: createJobQueue(workerDb.db), clock, log }, options.worker),
    bus: new EventBus(log),
    interest: new EventInterest(),
    metrics: new Metrics(),
  }
}

function createModules(platform: Platform, options: RuntimeOptions) {
  const platformArea = createPlatformModule(platform)
  const identity = createIdentityModule(platform, platformArea.idempotency)
  const { http } = identity
  const domains = createDomainsModule(platform, http)
  const pages = createPagesModule(platform, http, domains)
  const links = createLinksModule(platform, http, domains, pages)
  const clicks = createClicksModule(platform, options.clickWriter)
  const webhooks = createWebhooksModule(platform, http)
  return {
    platform: platformArea,
    identity,
    apiKeys: createApiKeysModule(identity, http),
    domains,
    links,
    qr: createQrModule(links, http),
    clicks,
    pages,
    redirect: createRedirectModule(platform, links, clicks, domains.served, pages.server),
    conversions: createConversionsModule(platform, http, () => clicks.buffer.flush()),
    analytics: createAnalyticsModule(platform, http),
    webhooks,
    automations: createAutomationsModule(platform, http, webhooks),
    forwarding: createForwardingModule(platform, http),
    console: createConsoleModule(platform),
  }
}

export type Modules = ReturnType<typeof createModules>

export interface Runtime extends Platform {
  modules: Modules
  startedAt: number
  /** Starts the worker, periodic triggers and the modules' timers and threads (the server; not the tests). */
  start(): void
  /**
   * Stops what start() began, lets running jobs finish (up to the shutdown timeout), closes the modules in
   * reverse order (each writes what it holds in memory) and closes the database connections. Idempotent.
   */
  close(): Promise<void>
}

export function createRuntime(config: Config, options: RuntimeOptions = {}): Runtime {
  const platform = createPlatform(config, options)
  let modules: Modules
  try {
    modules = createModules(platform, options)
  } catch (err) {
    platform.workerDb.close()
    platform.db.close()
    throw err
  }
  const list: Module[] = Object.values(modules)
  for (const m of list) {
    for (const job of m.jobs ?? []) platform.worker.handle(job.type, job.run, { lane: job.lane })
    for (const consumer of m.consumers ?? []) platform.worker.consumeOutbox(consumer)
  }
  const { queue, clock, metrics } = platform
  metrics.gauge('lnk_jobs_due', 'Jobs due now and not yet claimed (queue depth).', async () => (await queue.depth(clock.now())).due)
  metrics.gauge('lnk_jobs_running', 'Jobs being run.', async () => (await queue.depth(clock.now())).running)
  metrics.gauge('lnk_jobs_dead', 'Jobs that failed for good.', async () => (await queue.depth(clock.now())).dead)

  let periodic: { stop(): void } | undefined
  let started = false
  let closing: Promise<void> | undefined
  return {
    ...platform,
    modules,
    startedAt: clock.now(),
    start() {
      if (started) return
      started = true
      platform.worker.start()
      for (const m of list) m.start?.()
      periodic = startPeriodic(
        platform.db.db,
        list.flatMap((m) => m.periodic ?? []),
        () => clock.now(),
        () => platform.worker.notify(),
        (task, err) => platform.log.error('periodic trigger failed', { task: task.name, error: String(err) }),
      )
    },
    close() {
      closing ??= (async () => {
        periodic?.stop()
        // Modules first (the click buffer writes what it holds), then the worker finishes its jobs.
        for (const m of [...list].reverse()) await m.close?.()
        if (started) await platform.worker.stop(config.shutdownTimeoutSeconds * 1000)
        platform.workerDb.close()
        platform.db.close()
      })()
      return closing
    },
  }
}
