// The domains area's port: plain types, no engine (repo.ts answers it on either engine).
import type { PublishInput } from '../../events/outbox'
import type { EnqueueInput } from '../../jobs/queue'

/** What a domain check saw (the `seen` column; its table declares the same shape, test/db/repo-ports.test.ts holds them equal). */
export interface SeenRecords {
  txt: string[] | null
  cname: string[] | null
  a: string[] | null
  aaaa: string[] | null
  /** The plain-HTTP check of /.well-known/lnk/<token>: reached this instance, or why not; null if not tried. */
  http: { reached: boolean; detail: string } | null
  /** Lookups that failed for a reason other than "no such record" (timeouts, SERVFAIL), by name. */
  errors: string[]
}

export interface DomainRow {
  id: string
  workspaceId: string
  domain: string
  verificationStatus: 'pending' | 'verified' | 'failed'
  dnsStatus: 'unknown' | 'ok' | 'misconfigured' | 'conflicting'
  sslStatus: 'unmanaged' | 'pending' | 'active' | 'failed'
  token: string
  failureReason: string | null
  seen: SeenRecords | null
  rootRedirectUrl: string | null
  notFoundUrl: string | null
  expiredUrl: string | null
  lastCheckedAt: number | null
  nextCheckAt: number | null
  verifiedAt: number | null
  misconfiguredAt: number | null
  createdAt: number
  updatedAt: number
}

export type DomainPatch = Partial<Omit<DomainRow, 'id' | 'workspaceId' | 'domain' | 'token' | 'createdAt'>>

/** What else a write carries: events to publish and a job to enqueue, in the same transaction. */
export interface Effects {
  events?: PublishInput[]
  job?: EnqueueInput
}

export type InsertOutcome = { ok: true } | { ok: false; reason: 'taken_here' | 'verified_elsewhere'; id?: string }

export type CheckOutcome =
  | { ok: true; row: DomainRow; failedElsewhere: string[] }
  /** Another workspace verified the domain first. */
  | { ok: false; reason: 'claimed_elsewhere' }
  | { ok: false; reason: 'gone' }

export type DeleteOutcome = { ok: true; archivedLinks: number } | { ok: false; reason: 'has_links'; links: number } | { ok: false; reason: 'gone' }

export interface DomainsRepo {
  insert(row: DomainRow, effects: Effects): Promise<InsertOutcome>
  findById(workspaceId: string, id: string): Promise<DomainRow | undefined>
  /** For jobs: the row whatever its workspace. */
  findAnyById(id: string): Promise<DomainRow | undefined>
  findByToken(token: string): Promise<DomainRow | undefined>
  /** Oldest first: of one workspace when given, else of every workspace (the admin CLI). */
  list(workspaceId?: string): Promise<DomainRow[]>
  /** Every verified domain, by name: the served set. */
  verified(): Promise<DomainRow[]>
  update(id: string, patch: DomainPatch, effects?: Effects): Promise<DomainRow | undefined>
  /**
   * Writes a check's outcome. When it verifies the domain, pending claims of other workspaces on the same
   * domain fail in the same transaction; a workspace that verified it first wins (claimed_elsewhere).
   */
  recordCheck(id: string, patch: DomainPatch, effects: Effects, failElsewhere: { reason: string; now: number } | null): Promise<CheckOutcome>
  /** Deletes the domain; links on it (not yet archived) refuse it unless `archiveLinks`, which archives them. */
  delete(id: string, workspaceId: string, archiveLinks: boolean, effects: (archivedLinks: number) => Effects): Promise<DeleteOutcome>
}

/**
 * SQLite's synchronous read of the served set: the module fills it while it is built (SQLite modules answer
 * before the first request without an init step) and at each refresh.
 */
export interface DomainsSyncReads {
  verifiedSync(): DomainRow[]
}
