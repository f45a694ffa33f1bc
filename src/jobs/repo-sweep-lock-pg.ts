// The sweep lock's statements (sweep-lock-pg.ts): a session-level advisory lock held on a connection the
// holder keeps for its lifetime.
import type { SQL } from 'bun'

/**
 * Settings for a session that holds a lock for the node's lifetime and idles between checks: no
 * idle_session_timeout, and TCP keepalives that let the server notice a vanished peer in ~25 s, not hours.
 */
export async function keepLockSessionPg(conn: SQL): Promise<void> {
  await conn`SELECT set_config('idle_session_timeout', '0', false), set_config('tcp_keepalives_idle', '10', false),
    set_config('tcp_keepalives_interval', '5', false), set_config('tcp_keepalives_count', '3', false)`
}

/**
 * Whether this session holds the session-level advisory lock `key`, taking it when free. Taken only when the
 * session does not hold it already: taking it twice would need two unlocks.
 */
export async function holdSessionLockPg(conn: SQL, key: bigint): Promise<boolean> {
  const [row] = await conn`SELECT CASE WHEN EXISTS (
      SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted AND objsubid = 1
        AND ((classid::bigint << 32) | objid::bigint) = ${key}::bigint
    ) THEN true ELSE pg_try_advisory_lock(${key}::bigint) END AS held`
  return row.held === true
}

/** Lets go of the session-level advisory lock `key` held by this session (no-op, with a server warning, when it does not hold it). */
export async function releaseSessionLockPg(conn: SQL, key: bigint): Promise<void> {
  await conn`SELECT pg_advisory_unlock(${key}::bigint)`
}
