// Opens the PostgreSQL pool named by LNK_DATABASE_URL with Bun's built-in client (no native add-on, so the
// compiled executable stays one file) and proves it answers, so a bad URL stops start-up with one line that
// names the setting and never the password.
import { SQL } from 'bun'
import { redactUrl } from '../../platform/config'

export interface PgOptions {
  /** Connections in the pool. */
  max?: number
  /** How long the first connection may take, in seconds. */
  connectTimeoutSeconds?: number
}

export async function openPostgres(url: string, options: PgOptions = {}): Promise<SQL> {
  const sql = new SQL(url, { max: options.max ?? 10, connectionTimeout: options.connectTimeoutSeconds ?? 10, idleTimeout: 60 })
  try {
    await sql`SELECT 1`
    return sql
  } catch (err) {
    await sql.close().catch(() => {})
    const code = (err as { code?: unknown }).code
    const why = `${err instanceof Error ? err.message : String(err)}${typeof code === 'string' && code ? ` (${code})` : ''}`
    // The client's message may repeat the URL it was given; never let the password through.
    const password = safePassword(url)
    throw new Error(`cannot use the database at ${redactUrl(url)} (LNK_DATABASE_URL): ${password ? why.replaceAll(password, '***') : why}`)
  }
}

function safePassword(url: string): string {
  try {
    return decodeURIComponent(new URL(url).password)
  } catch {
    return ''
  }
}
