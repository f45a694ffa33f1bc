// Server-wide values generated once and kept in the database (so a restart or a backup keeps them).
// The port comes first; the SQLite implementation follows it.
import { eq } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { settings } from '../../db/schema'
import { randomSecretBytes } from '../../platform/random'

/** The server secrets modules read while they are built (PostgreSQL reads them all before). */
export const SERVER_SECRETS = ['visitor_hash_key', 'cookie_signing_key', 'domain_check_key'] as const

export interface SettingsRepo {
  /**
   * The named secret, created on first use. Synchronous on purpose: modules read it while they are built,
   * which is synchronous, and hand it to the redirect path, which never awaits the database.
   */
  serverSecret(name: string, now: number): Buffer
}

// --- SQLite ------------------------------------------------------------------------------------------

export function createSettingsRepo(db: Db): SettingsRepo {
  const read = (name: string) => db.select().from(settings).where(eq(settings.key, name)).get()
  return {
    serverSecret(name, now) {
      const existing = read(name)
      if (existing) return Buffer.from(existing.value, 'base64')
      db.insert(settings).values({ key: name, value: randomSecretBytes(32).toString('base64'), createdAt: now }).onConflictDoNothing().run()
      return Buffer.from(read(name)!.value, 'base64')
    },
  }
}

