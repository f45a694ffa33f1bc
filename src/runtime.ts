// The one wiring place. A runtime is the platform (configuration, clock, log, the database connections, the
// job worker, the event bus, metrics) plus the feature modules, built in dependency order, plus one close().
// The server, the CLI and the tests all build it here, the same way.
import { startCheckpointer } from './db/checkpointer'
import { openDatabase, prepareDataDir, type CheckpointMode, type DbHandle } from './db/client'
import { migrate } from './db/migrate'
import { pgDrizzle } from './db/pg/client'
import { openPostgres } from './db/pg/connect'
import { migratePostgres } from './db/pg/migrate'
import { listenChanges, type ChangeListener } from './db/pg/notify'
import { engineOf, type SqliteStore } from './db/store'
import { EventBus } from './events/bus'
import { BUS_CHANNEL } from './events/bus'
import { receiveBusNotice, relayBusPg } from './events/bus-pg'
import { registerEvents } from './events/catalogue'
import { EventInterest } from './events/interest'
import { createOutbox, OUTBOX_CHANNEL, type Outbox } from './events/outbox'
import { Metrics } from './http/metrics'
import { startPeriodic, type PeriodicTask } from './jobs/periodic'
import { createJobQueue, JOBS_CHANNEL } from './jobs/queue'
import { createSweepLock } from './jobs/sweep-lock-pg'
import { Worker, type WorkerOptions } from './jobs/worker'
import { createAnalyticsModule } from './modules/analytics'
import { createApiKeysModule } from './modules/api-keys'
import { createClicksModule, type ClickWriterKind } from './modules/clicks'
import { createConsoleModule } from './modules/console'
import { createConversionsModule } from './modules/conversions'
import { createDomainsModule } from './modules/domains'
import { createAutomationsModule } from './modules/automations'
import { createFoldersModule } from './modules/folders'
import { createForwardingModule } from './modules/forwarding'
import { createIdentityModule } from './modules/identity'
import { createLinksModule } from './modules/links'
import type { Module, Platform } from './modules/module'
import { createTagsModule } from './modules/tags'
import { createSystemModule, SERVER_SECRETS, preloadSettings, createSettingsRepoSqlite } from './modules/system'
import { createPagesModule } from './modules/pages'
import { createQrModule, linkQr } from './modules/qr'
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

/** What the platform holds beyond what modules see: the engine's own parts, started and closed here. */
interface EngineParts {
  outbox: Outbox
  startPeriodic(tasks: PeriodicTask[], onError: (task: PeriodicTask, err: unknown) => void): { stop(): void }
  /** After the modules and the worker: closes the connections. */
  close(): Promise<void>
}

/** The worker's options: the configured lease unless the caller (a test) says otherwise. */
const workerOptions = (config: Config, options: RuntimeOptions): WorkerOptions => ({ leaseMs: config.jobLeaseSeconds * 1000, ...options.worker })

function basics(config: Config, options: RuntimeOptions) {
  const log = options.log ?? createLogger(config.logLevel)
  return {
    instanceId: base62(12),
    config,
    clock: options.clock ?? systemClock,
    log,
    bus: new EventBus(log),
    interest: new EventInterest(),
    metrics: new Metrics(),
  }
}

function createSqlitePlatform(config: Config, options: RuntimeOptions): { platform: Platform; parts: EngineParts } {
  const base = basics(config, options)
  const { clock, log } = base
  // The server (its clicks written by a thread) checkpoints on a thread too; tools and tests as they commit.
  const checkpoints: CheckpointMode = options.clickWriter === 'thread' ? 'background' : 'auto'
  const db = openDatabase(prepareDataDir(config.dataDir), { cacheMb: 16, checkpoints })
  try {
    const { applied } = migrate(db.sqlite)
    if (applied.length) log.info('migrations applied', { count: applied.length, latest: applied.at(-1) })
  } catch (err) {
    db.close()
    throw err
  }
  // The worker claims jobs and dispatches the outbox on a connection of its own that never waits for the
  // write lock, so background work cannot stall requests while the click writer holds it.
  const workerDb = openDatabase(db.path, { busyTimeoutMs: 0, cacheMb: 8, checkpoints })
  const checkpointer = checkpoints === 'background' ? startCheckpointer(db.path, log) : null
  const store: SqliteStore = { engine: 'sqlite', db, workerDb, checkpoints }
  const outbox = createOutbox(engineOf(store, 'worker'), [], () => clock.now())
  const platform: Platform = {
    ...base,
    store,
    settings: createSettingsRepoSqlite(db.db),
    queue: createJobQueue(engineOf(store)),
    worker: new Worker({ queue: createJobQueue(engineOf(store, 'worker')), clock, log, outbox }, workerOptions(config, options)),
  }
  return {
    platform,
    parts: {
      outbox,
      startPeriodic: (tasks, onError) =>
        startPeriodic(
          engineOf(store),
          tasks,
          () => clock.now(),
          () => platform.worker.notify(),
          onError,
        ),
      async close() {
        // Before the last connection's closing checkpoint, which would otherwise find this one under way.
        await checkpointer?.close()
        workerDb.close()
        db.close()
      },
    },
  }
}

/**
 * PostgreSQL: one pool for requests and the worker, a LISTEN connection that wakes the worker and relays the
 * bus between nodes, and a session lock that runs the periodic sweeps on one node.
 */
async function createPgPlatform(config: Config, url: string, options: RuntimeOptions): Promise<{ platform: Platform; parts: EngineParts }> {
  const base = basics(config, options)
  const { clock, log, bus, instanceId } = base
  const sql = await openPostgres(url, { max: config.databasePoolSize })
  let listener: ChangeListener | undefined
  try {
    const { applied } = await migratePostgres(sql)
    if (applied.length) log.info('migrations applied', { count: applied.length, latest: applied.at(-1) })
    const db = pgDrizzle(sql)
    const store = { engine: 'pg' as const, db, sql, url }
    const settings = await preloadSettings(engineOf(store), [...SERVER_SECRETS], clock.now())
    const outbox = createOutbox(engineOf(store), [], () => clock.now())
    const queue = createJobQueue(engineOf(store))
    const worker = new Worker({ queue, clock, log, outbox }, workerOptions(config, options))
    relayBusPg(bus, sql, instanceId, log)
    listener = await listenChanges(url, [BUS_CHANNEL, JOBS_CHANNEL, OUTBOX_CHANNEL], {
      onChange: (channel, payload) => (channel === BUS_CHANNEL ? receiveBusNotice(bus, instanceId, payload, log) : worker.notify()),
      onReset(cause) {
        // 'reconnected': notices sent meanwhile are lost; 'notice': a change too large to name was made.
        log.warn('caches cleared: changes made on other nodes may not have been heard', { cause })
        bus.emitLocal('caches.reset', {})
        worker.notify()
      },
    })
    const sweepLock = createSweepLock(sql)
    const heard = listener
    const platform: Platform = { ...base, store, settings, queue, worker }
    return {
      platform,
      parts: {
        outbox,
        startPeriodic: (tasks, onError) =>
          startPeriodic(
            engineOf(store),
            tasks,
            () => clock.now(),
            () => worker.notify(),
            onError,
            sweepLock,
          ),
        async close() {
          bus.relayTo(null)
          // The lock's connection first: the pool's close() waits for it.
          await sweepLock.close()
          await heard.close()
          // Bounded: a connection still reserved (a database gone away mid-release) must not hold the exit.
          await sql.close({ timeout: config.shutdownTimeoutSeconds })
        },
      },
    }
  } catch (err) {
    await listener?.close().catch(() => {})
    await sql.close().catch(() => {})
    throw err
  }
}

function createModules(platform: Platform, options: RuntimeOptions) {
  const system = createSystemModule(platform)
  const identity = createIdentityModule(platform, system.idempotency)
  const { http } = identity
  const domains = createDomainsModule(platform, http)
  const pages = createPagesModule(platform, http, domains)
  const folders = createFoldersModule(platform, http)
  const links = createLinksModule(platform, http, domains, pages, linkQr, folders.repo)
  const clicks = createClicksModule(platform, options.clickWriter)
  const webhooks = createWebhooksModule(platform, http)
  return {
    system,
    identity,
    apiKeys: createApiKeysModule(identity, http),
    domains,
    folders,
    links,
    tags: createTagsModule(platform, http),
    qr: createQrModule(links, domains, http),
    clicks,
    pages,
    redirect: createRedirectModule(platform, links, clicks, domains.served, pages.server, http),
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
  /** The SQLite connections (tests and admin commands that work on the file); throws on PostgreSQL. */
  readonly db: DbHandle
  readonly workerDb: DbHandle
  /** The outbox the worker drains (tests add consumers to it). */
  readonly outbox: Outbox
  /** Starts the worker, periodic triggers and the modules' timers and threads (the server; not the tests). */
  start(): void
  /**
   * Stops what start() began, lets running jobs finish (up to the shutdown timeout), closes the modules in
   * reverse order (each writes what it holds in memory) and closes the database connections. Idempotent.
   */
  close(): Promise<void>
}

/** A runtime on SQLite, built synchronously (tests and admin commands). `lnk serve` uses openRuntime. */
export function createRuntime(config: Config, options: RuntimeOptions = {}): Runtime {
  if (config.databaseUrl)
    throw new ConfigError('LNK_DATABASE_URL is set: this command works on the SQLite file only; unset LNK_DATABASE_URL (or leave out --database-url)')
  const { platform, parts } = createSqlitePlatform(config, options)
  return assemble(platform, parts, options)
}

/** A runtime on the engine the configuration names: PostgreSQL with LNK_DATABASE_URL, else SQLite. */
export async function openRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  if (!config.databaseUrl) return createRuntime(config, options)
  const { platform, parts } = await createPgPlatform(config, config.databaseUrl, options)
  const rt = assemble(platform, parts, options)
  try {
    for (const m of Object.values(rt.modules) as Module[]) await m.init?.()
  } catch (err) {
    await rt.close()
    throw err
  }
  return rt
}

function assemble(platform: Platform, parts: EngineParts, options: RuntimeOptions): Runtime {
  const { config } = platform
  let modules: Modules
  try {
    modules = createModules(platform, options)
  } catch (err) {
    void parts.close()
    throw err
  }
  const list: Module[] = Object.values(modules)
  registerEvents(list.flatMap((m) => m.events ?? []))
  for (const m of list) for (const job of m.jobs ?? []) platform.worker.handle(job.type, job.run, { lane: job.lane })
  for (const consume of list.flatMap((m) => m.consumers ?? [])) parts.outbox.consume(consume)
  const { queue, clock, metrics, store } = platform
  metrics.gauge('lnk_jobs_due', 'Jobs due now and not yet claimed (queue depth).', async () => (await queue.depth(clock.now())).due)
  metrics.gauge('lnk_jobs_running', 'Jobs being run.', async () => (await queue.depth(clock.now())).running)
  metrics.gauge('lnk_jobs_dead', 'Jobs that failed for good.', async () => (await queue.depth(clock.now())).dead)

  const sqliteOnly = (): SqliteStore => {
    if (store.engine !== 'sqlite') throw new Error('this runtime serves from PostgreSQL; the SQLite connections do not exist')
    return store
  }
  let periodic: { stop(): void } | undefined
  let started = false
  let closing: Promise<void> | undefined
  return {
    ...platform,
    modules,
    startedAt: clock.now(),
    get db() {
      return sqliteOnly().db
    },
    get workerDb() {
      return sqliteOnly().workerDb
    },
    outbox: parts.outbox,
    start() {
      if (started) return
      started = true
      platform.worker.start()
      for (const m of list) m.start?.()
      periodic = parts.startPeriodic(
        list.flatMap((m) => m.periodic ?? []),
        (task, err) => platform.log.error('periodic trigger failed', { task: task.name, error: String(err) }),
      )
    },
    close() {
      closing ??= (async () => {
        periodic?.stop()
        // Each step runs whatever the one before met (a database gone away, say), so the connections are
        // still closed and the process can end; what failed is logged.
        const step = async (what: string, run: () => Promise<void> | void) => {
          try {
            await run()
          } catch (err) {
            platform.log.error('shutdown step failed', { step: what, error: err instanceof Error ? err.message : String(err) })
          }
        }
        // Modules first (the click buffer writes what it holds), then the worker finishes its jobs.
        for (const m of [...list].reverse()) await step(`module ${m.name}`, () => m.close?.())
        if (started) await step('worker', () => platform.worker.stop(config.shutdownTimeoutSeconds * 1000))
        await step('connections', () => parts.close())
      })()
      return closing
    },
  }
}
