// Server-wide secrets (port-settings.ts) on either engine, awaited; preloadSettings reads the secrets a
// process needs before its modules are built, so they get the synchronous port over values already read.
import { eq } from 'drizzle-orm'
import type { Engine } from '../../db/engine'
import { randomSecretBytes } from '../../platform/random'
import type { ServerSecrets, SettingsRepo } from './port-settings'

export function createSettingsRepo(engine: Engine): ServerSecrets {
  const { db } = engine
  const { settings } = engine.t
  const read = async (name: string) => (await db.select().from(settings).where(eq(settings.key, name)).limit(1))[0]
  return {
    async serverSecret(name, now) {
      const existing = await read(name)
      if (existing) return Buffer.from(existing.value, 'base64')
      // Nodes starting together may all miss it. ON CONFLICT DO NOTHING makes the later inserts wait for the
      // first one's commit and then keep it; the read after it (a new snapshot at READ COMMITTED) sees the
      // secret that won, so every node ends with the same one.
      await db
        .insert(settings)
        .values({ key: name, value: randomSecretBytes(32).toString('base64'), createdAt: now })
        .onConflictDoNothing()
      return Buffer.from((await read(name))!.value, 'base64')
    },
  }
}

/** The synchronous port over `names`, read (and created where missing) now; any other name is a bug. */
export async function preloadSettings(engine: Engine, names: string[], now: number): Promise<SettingsRepo> {
  const repo = createSettingsRepo(engine)
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
