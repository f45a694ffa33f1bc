// Server-wide values generated once and kept in the database (so a restart or a backup keeps them).
import { eq } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { settings } from '../../db/schema'
import { randomSecretBytes } from '../../platform/random'

/** The named secret, created on first use. Synchronous: it is read while building the runtime. */
export function serverSecret(db: Db, name: string, now: number): Buffer {
  const existing = db.select().from(settings).where(eq(settings.key, name)).get()
  if (existing) return Buffer.from(existing.value, 'base64')
  db.insert(settings).values({ key: name, value: randomSecretBytes(32).toString('base64'), createdAt: now }).onConflictDoNothing().run()
  return Buffer.from(db.select().from(settings).where(eq(settings.key, name)).get()!.value, 'base64')
}
