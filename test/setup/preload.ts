// bunfig.toml's [test] preload: runs once per `bun test` process, before any test file, whichever files were
// named. Makes sure the system packages the suite needs are installed (test/setup/system-packages.ts);
// silent when they are. LNK_TEST_SYSTEM_PACKAGES=off skips this (for running, on another system, only tests
// that need none of them).
import { ensureSystemPackages } from './system-packages'

if (process.env.LNK_TEST_SYSTEM_PACKAGES !== 'off') {
  const result = ensureSystemPackages()
  if (!result.ok) {
    console.error(result.message)
    process.exit(1)
  }
}
