// Server-wide secrets on PostgreSQL. The port (repo-settings.ts) answers synchronously, which a network
// database cannot: serverSecret is awaited here, and preloadSettingsPg reads the secrets a process needs
// before its modules are built, so they get the synchronous port over values already read.
import { eq } from 'drizzle-orm'
import type { PgDb } from '../../db/pg/client'
import { settings } from '../../db/pg/schema.generated'
import { randomSecretBytes } from '../../platform/random'
import type { SettingsRepo } from './repo-settings'

/** SettingsRepo as PostgreSQL answers it. */
export interface SettingsRepoPg {
  /** The named secret, created on first use; every node asking at once gets the same one. */
  serverSecret(name: string, now: number): Promise<Buffer>
}

export function createSettingsRepoPg(db: PgDb): SettingsRepoPg {
  const read = async (name: string) => (await db.select().from(settings).where(eq(settings.key, name)).limit(1))[0]
  return {
    async serverSecret(name, now) {
      const existing = await read(name)
      if (existing) return Buffer.from(existing.value, 'base64')
      // Nodes starting together may all miss it. ON CONFLICT DO NOTHING makes the later inserts wait for the
      // first one's commit and then keep it; the read after it (a new snapshot at READ COMMITTED) sees the
      // secret that won, so every node ends with the same one.
      await db.insert(settings).values({ key: name, value: randomSecretBytes(32).toString('base64'), createdAt: now }).onConflictDoNothing()
      return Buffer.from((await read(name))!.value, 'base64')
    },
  }
}

/** The synchronous port over `names`, read (and created where missing) now; any other name is a bug. */
export async function preloadSettingsPg(db: PgDb, names: string[], now: number): Promise<SettingsRepo> {
  const repo = createSettingsRepoPg(db)
  const secrets = new Map<string, Buffer>()
  for (const name of names) secrets.set(name, await repo.serverSecret(name, now))
  return {
    serverSecret(name) {
      const secret = secrets.get(name)
      if (!secret) throw new Error(`server secret "${name}" was not preloaded`)
      return secret
    },
  }
}
