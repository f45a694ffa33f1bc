// Server-wide values generated once and kept in the database (so a restart or a backup keeps them): what
// modules read, and what the database answers (repo-settings.ts on either engine; repo-settings-sqlite.ts
// the synchronous reads of SQLite).

/** The server secrets modules read while they are built (PostgreSQL reads them all before). */
export const SERVER_SECRETS = ['visitor_hash_key', 'cookie_signing_key', 'domain_check_key'] as const

/** What every module reads (the platform offers it, so module.ts declares it). */
export type { SettingsRepo } from '../module'

/** The secrets as the database answers them, awaited. */
export interface ServerSecrets {
  /** The named secret, created on first use; every node asking at once gets the same one. */
  serverSecret(name: string, now: number): Promise<Buffer>
}
