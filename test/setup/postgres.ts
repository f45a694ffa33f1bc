// A real PostgreSQL for tests: LNK_TEST_DATABASE_URL when set (a server the caller runs), else a private
// cluster this process starts once on a free 127.0.0.1 port with Debian's binaries (initdb + pg_ctl, run as
// the `postgres` user when the tests run as root, since PostgreSQL refuses root). Each caller gets a database
// of its own, dropped by its cleanup. The cluster is stopped by the preload's global afterAll, once every file has run (bun test runs
// no process 'exit' handlers); one left by a test process that was killed is stopped by the next one.
import { spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL } from 'bun'

function postgresBin(): string {
  const root = '/usr/lib/postgresql'
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin/initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : []
  if (!versions[0])
    throw new Error('PostgreSQL is not installed: run `apt-get install -y postgresql` (bun test installs it through test/setup/system-packages.ts)')
  return join(root, versions[0], 'bin')
}

function run(command: string[], asPostgres: boolean) {
  const argv = asPostgres ? ['runuser', '-u', 'postgres', '--', ...command] : command
  const result = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 60_000 })
  if (result.status !== 0) throw new Error(`${command.join(' ')} failed (${result.status}): ${result.stderr || result.stdout}`)
  return result.stdout
}

function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response(null) })
  const port = probe.port!
  probe.stop(true)
  return port
}

let cluster: { url: string; stop(): void } | undefined

/** Each cluster's directory names the test process that owns it. */
const OWNER_FILE = 'owner.pid'
const CLUSTER_PREFIX = 'lnk-pg-'

function stopCluster(bin: string, dir: string, asPostgres: boolean) {
  const data = join(dir, 'data')
  const pgCtl = [join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', 'stop']
  if (existsSync(join(data, 'postmaster.pid')))
    spawnSync(asPostgres ? 'runuser' : pgCtl[0]!, asPostgres ? ['-u', 'postgres', '--', ...pgCtl] : pgCtl.slice(1), { timeout: 20_000 })
  rmSync(dir, { recursive: true, force: true })
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Stops the clusters of test processes that are gone (killed before their afterAll ran). */
function reapOrphans(bin: string, asPostgres: boolean) {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(CLUSTER_PREFIX)) continue
    const dir = join(tmpdir(), name)
    let owner: number
    try {
      owner = Number(readFileSync(join(dir, OWNER_FILE), 'utf8'))
    } catch {
      continue
    }
    if (Number.isSafeInteger(owner) && owner > 0 && !alive(owner)) stopCluster(bin, dir, asPostgres)
  }
}

/** Stops this process's private cluster, if it started one (the preload calls it after every test). */
export function stopPrivateCluster() {
  cluster?.stop()
  cluster = undefined
}

/** The admin URL of the private cluster, started at the first call. */
function privateCluster(): string {
  cluster ??= startCluster(process.pid)
  return cluster.url
}

/**
 * Starts a cluster on a free 127.0.0.1 port, owned by the process `owner` (a later run stops it once that
 * process is gone). The private cluster of a test process, and CI's second pass (test/setup/cluster.ts).
 */
export function startCluster(owner: number): { url: string; dir: string; stop(): void } {
  const bin = postgresBin()
  const asPostgres = process.getuid?.() === 0
  reapOrphans(bin, asPostgres)
  const dir = mkdtempSync(join(tmpdir(), CLUSTER_PREFIX))
  writeFileSync(join(dir, OWNER_FILE), String(owner))
  if (asPostgres) chownSync(dir, Number(run(['id', '-u', 'postgres'], false).trim()), Number(run(['id', '-g', 'postgres'], false).trim()))
  const data = join(dir, 'data')
  run([join(bin, 'initdb'), '-D', data, '-A', 'trust', '-U', 'lnk', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync'], asPostgres)
  const port = freePort()
  // fsync off: a test cluster lives and dies with its owner; durability is not what the tests check.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=500`
  run([join(bin, 'pg_ctl'), '-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '60', 'start'], asPostgres)
  return { url: `postgres://lnk@127.0.0.1:${port}/postgres`, dir, stop: () => stopCluster(bin, dir, asPostgres) }
}

/** Stops the cluster startCluster made in `dir`. */
export function stopClusterIn(dir: string) {
  if (!dir.startsWith(join(tmpdir(), CLUSTER_PREFIX))) throw new Error(`${dir} is not a test cluster's directory`)
  stopCluster(postgresBin(), dir, process.getuid?.() === 0)
}

export interface TestDatabase {
  url: string
  drop(): Promise<void>
}

let counter = 0

/** A fresh, empty database for one test file. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const admin = process.env.LNK_TEST_DATABASE_URL || privateCluster()
  const name = `lnk_test_${process.pid}_${++counter}_${Math.random().toString(36).slice(2, 8)}`
  const sql = new SQL(admin, { max: 1 })
  try {
    await sql.unsafe(`CREATE DATABASE ${name}`)
  } finally {
    await sql.close()
  }
  const url = new URL(admin)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      const again = new SQL(admin, { max: 1 })
      try {
        await again.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      } finally {
        await again.close()
      }
    },
  }
}
