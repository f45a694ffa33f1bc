// Server-wide secrets read synchronously on SQLite, as modules read them while they are built (runtime.ts
// builds a SQLite runtime without awaiting): the statements of repo-settings.ts, run at once. A secret may
// be asked for by any name, created on first use.
import { eq } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { settings } from '../../db/schema'
import { randomSecretBytes } from '../../platform/random'
import type { SettingsRepo } from './port-settings'

export function createSettingsRepoSqlite(db: Db): SettingsRepo {
  const read = (name: string) => db.select().from(settings).where(eq(settings.key, name)).get()
  return {
    serverSecret(name, now) {
      const existing = read(name)
      if (existing) return Buffer.from(existing.value, 'base64')
      db.insert(settings)
        .values({ key: name, value: randomSecretBytes(32).toString('base64'), createdAt: now })
        .onConflictDoNothing()
        .run()
      return Buffer.from(read(name)!.value, 'base64')
    },
  }
}
