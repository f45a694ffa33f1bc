// bunfig.toml's [test] preload: runs once per `bun test` process, before any test file, whichever files were
// named. Makes sure the system packages the suite needs are installed (test/setup/system-packages.ts);
// silent when they are. LNK_TEST_SYSTEM_PACKAGES=off skips this (for running, on another system, only tests
// that need none of them). It also stops the private PostgreSQL cluster the tests may start (postgres.ts).
import { afterAll } from 'bun:test'
import { stopPrivateCluster } from './postgres'
import { ensureSystemPackages } from './system-packages'

if (process.env.LNK_TEST_SYSTEM_PACKAGES !== 'off') {
  const result = ensureSystemPackages()
  if (!result.ok) {
    console.error(result.message)
    process.exit(1)
  }
}

// Once every test file has run: the private PostgreSQL cluster, if a test started one (bun test runs no
// process 'exit' handlers).
afterAll(() => stopPrivateCluster())
