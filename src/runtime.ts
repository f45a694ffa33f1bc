// Builds everything a running lnk holds: database (migrated), repositories, in-memory trackers, metrics,
// the job worker and periodic tasks. The server, the tests and the CLI all start from here.
import { systemClock, type Clock } from './platform/clock'
import type { Config } from './platform/config'
import { openDatabase, prepareDataDir, type DbHandle } from './db/client'
import { migrate } from './db/migrate'
import { Metrics } from './http/metrics'
import { registerPlatformJobs, PERIODIC_TASKS } from './jobs/tasks'
import { createJobQueue, type JobQueue } from './jobs/queue'
import { startPeriodic } from './jobs/periodic'
import { Worker, type WorkerOptions } from './jobs/worker'
import { createLogger, type Logger } from './platform/log'
import { LastUsedTracker } from './modules/identity/last-used'
import { createEnricher } from './modules/analytics/enrich'
import { backfillRollups } from './modules/analytics/maintenance'
import { createIdentityRepo, type IdentityRepo } from './modules/identity/repo'
import { RateLimiter } from './modules/api-keys/rate-limit'
import { createLinksRepo, type LinksRepo } from './modules/links/repo'
import { createIdempotencyRepo, type IdempotencyRepo } from './modules/platform/idempotency-repo'
import { serverSecret } from './modules/platform/settings-repo'
import { LinkCache } from './modules/redirect/cache'
import { ClickBuffer } from './modules/redirect/click-buffer'
import { createClicksRepo, type ClicksRepo } from './modules/redirect/clicks-repo'
import { inlineClickWriter, threadClickWriter } from './modules/redirect/click-writer'
import { createRedirectHandler, type RedirectHandler } from './modules/redirect/handler'
import { registerWebhooks } from './modules/webhooks/register'
import { base62 } from './platform/random'

export interface Runtime {
  /** Distinguishes runtimes in one process (tests build many). */
  instanceId: string
  config: Config
  db: DbHandle
  clock: Clock
  log: Logger
  identity: IdentityRepo
  idempotency: IdempotencyRepo
  lastUsed: LastUsedTracker
  metrics: Metrics
  queue: JobQueue
  worker: Worker
  /** The worker's own connection (see createRuntime). */
  workerDb: DbHandle
  links: LinksRepo
  clicks: ClicksRepo
  linkCache: LinkCache
  clickBuffer: ClickBuffer
  /** Key of the keyed hashes of visitors and client addresses (raw addresses are never stored). */
  visitorKey: Buffer
  /** Key that signs the redirect pages' cookies (password, captcha, consent). */
  cookieKey: Buffer
  /** Per-key request rates (in memory; a restart opens a fresh window). */
  rateLimiter: RateLimiter
  /** Answers a short-link request, or null when the request is not one. */
  redirect: RedirectHandler
  startedAt: number
}

export interface RuntimeOptions {
  clock?: Clock
  log?: Logger
  worker?: WorkerOptions
  /** 'thread': clicks are written by a thread of their own (the server); 'inline' (default): by the caller. */
  clickWriter?: 'inline' | 'thread'
}

export function createRuntime(config: Config, options: RuntimeOptions = {}): Runtime {
  const log = options.log ?? createLogger(config.logLevel)
  const clock = options.clock ?? systemClock
  const db = openDatabase(prepareDataDir(config.dataDir))
  try {
    const { applied } = migrate(db.sqlite)
    if (applied.length) log.info('migrations applied', { count: applied.length, latest: applied.at(-1) })
    const rolledUp = backfillRollups(db.db, clock.now())
    if (rolledUp) log.info('clicks recorded before rollups existed were rolled up', { clicks: rolledUp })
  } catch (err) {
    db.close()
    throw err
  }
  const identity = createIdentityRepo(db.db)
  const queue = createJobQueue(db.db)
  // The worker claims jobs and dispatches the outbox on a connection of its own that never waits for the
  // write lock, so background work cannot stall requests while the click writer holds it.
  const workerDb = openDatabase(db.path, { busyTimeoutMs: 0 })
  const workerQueue = createJobQueue(workerDb.db)
  const links = createLinksRepo(db.db)
  const visitorKey = serverSecret(db.db, 'visitor_hash_key', clock.now())
  // Clicks are enriched (country, device, browser, OS) by whichever writer writes them: the thread builds
  // its own enricher from the same database path; this one serves inline writes and the fallback.
  const enricher = createEnricher({ geoipPath: config.geoipDb, onError: (message) => log.error(message) })
  const clicks = createClicksRepo(db.db, visitorKey, enricher)
  const inline = inlineClickWriter(clicks)
  const writer = options.clickWriter === 'thread' ? threadClickWriter(db.path, visitorKey, inline, log, { geoipPath: config.geoipDb, logLevel: config.logLevel }) : inline
  const clickBuffer = new ClickBuffer(writer, clock, log)
  const rt: Runtime = {
    instanceId: base62(12),
    config,
    db,
    clock,
    log,
    identity,
    idempotency: createIdempotencyRepo(db.db),
    lastUsed: new LastUsedTracker(identity),
    metrics: new Metrics(),
    queue,
    worker: new Worker({ db: workerDb.db, queue: workerQueue, clock, log }, options.worker),
    workerDb,
    links,
    clicks,
    linkCache: new LinkCache(links, (id) => clicks.admittedAddressesSync(id), clickBuffer),
    clickBuffer,
    visitorKey,
    cookieKey: serverSecret(db.db, 'cookie_signing_key', clock.now()),
    rateLimiter: new RateLimiter(),
    redirect: () => null,
    startedAt: clock.now(),
  }
  rt.redirect = createRedirectHandler(rt)
  registerPlatformJobs(rt)
  registerWebhooks(rt)
  rt.metrics.gauge('lnk_jobs_due', 'Jobs due now and not yet claimed (queue depth).', async () => (await queue.depth(clock.now())).due)
  rt.metrics.gauge('lnk_jobs_running', 'Jobs being run.', async () => (await queue.depth(clock.now())).running)
  rt.metrics.gauge('lnk_click_buffer', 'Clicks waiting in memory for the next flush.', () => clickBuffer.size)
  rt.metrics.gauge('lnk_jobs_dead', 'Jobs that failed for good.', async () => (await queue.depth(clock.now())).dead)
  return rt
}

export interface Background {
  stop(): Promise<void>
}

/** Starts the worker, periodic triggers and in-memory flushes; stop() ends them and writes what is held. */
export function startBackground(rt: Runtime): Background {
  rt.worker.start()
  rt.clickBuffer.start()
  const periodic = startPeriodic(
    rt.db.db,
    PERIODIC_TASKS,
    () => rt.clock.now(),
    () => rt.worker.notify(),
    (task, err) => rt.log.error('periodic trigger failed', { task: task.name, error: String(err) }),
  )
  const flushTimer = setInterval(() => {
    rt.lastUsed.flush().catch((err) => rt.log.error('last-used flush failed', { error: (err as Error).message }))
  }, 60_000)
  return {
    async stop() {
      periodic.stop()
      clearInterval(flushTimer)
      await rt.clickBuffer.stop()
      await rt.worker.stop(rt.config.shutdownTimeoutSeconds * 1000)
      rt.workerDb.sqlite.close(true)
      await rt.lastUsed.flush()
    },
  }
}
