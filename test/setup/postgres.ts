// A real PostgreSQL for tests: LNK_TEST_DATABASE_URL when set (a server the caller runs), else a private
// cluster this process starts once on a free 127.0.0.1 port with Debian's binaries (initdb + pg_ctl, run as
// the `postgres` user when the tests run as root, since PostgreSQL refuses root), stopped when the process
// exits. Each caller gets a database of its own, dropped by its cleanup.
import { spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL } from 'bun'

function postgresBin(): string {
  const root = '/usr/lib/postgresql'
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin/initdb'))).sort((a, b) => Number(b) - Number(a)) : []
  if (!versions[0]) throw new Error('PostgreSQL is not installed: run `apt-get install -y postgresql` (bun test installs it through test/setup/system-packages.ts)')
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

let cluster: { url: string } | undefined

/** The admin URL of the private cluster, started at the first call. */
function privateCluster(): string {
  if (cluster) return cluster.url
  const bin = postgresBin()
  const asPostgres = process.getuid?.() === 0
  const dir = mkdtempSync(join(tmpdir(), 'lnk-pg-'))
  if (asPostgres) chownSync(dir, Number(run(['id', '-u', 'postgres'], false).trim()), Number(run(['id', '-g', 'postgres'], false).trim()))
  const data = join(dir, 'data')
  run([join(bin, 'initdb'), '-D', data, '-A', 'trust', '-U', 'lnk', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync'], asPostgres)
  const port = freePort()
  // fsync off: a test cluster lives and dies with the process; durability is not what the tests check.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300`
  run([join(bin, 'pg_ctl'), '-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '60', 'start'], asPostgres)
  process.on('exit', () => {
    spawnSync(asPostgres ? 'runuser' : join(bin, 'pg_ctl'), asPostgres ? ['-u', 'postgres', '--', join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', 'stop'] : ['-D', data, '-m', 'immediate', 'stop'], { timeout: 20_000 })
    rmSync(dir, { recursive: true, force: true })
  })
  cluster = { url: `postgres://lnk@127.0.0.1:${port}/postgres` }
  return cluster.url
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
