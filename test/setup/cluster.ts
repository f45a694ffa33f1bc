// CI's second pass (issue 18): a PostgreSQL cluster on 127.0.0.1 for a whole `bun test` run.
//   bun test/setup/cluster.ts start <owner-pid>   prints `<admin url> <dir>`; the cluster lives until stopped or
//                                                 until a later test run finds <owner-pid> gone
//   bun test/setup/cluster.ts stop <dir>
// With LNK_TEST_DATABASE_URL set to the URL, every test that opens a database does so on PostgreSQL.
import { startCluster, stopClusterIn } from './postgres'

const [command, arg] = process.argv.slice(2)
if (command === 'start' && arg && Number.isSafeInteger(Number(arg))) {
  const cluster = startCluster(Number(arg))
  console.log(`${cluster.url} ${cluster.dir}`)
} else if (command === 'stop' && arg) {
  stopClusterIn(arg)
} else {
  console.error('usage: bun test/setup/cluster.ts start <owner-pid> | stop <dir>')
  process.exit(2)
}
