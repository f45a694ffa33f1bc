// Forwarding sessions' port: the per-key signing secret, the sessions, and their queues, in plain types
// (repo.ts answers it on either engine).

export interface SessionRow {
  id: string
  workspaceId: string
  keyId: string
  mode: 'live' | 'test'
  events: string[]
  deviceName: string | null
  dropped: number
  createdAt: number
  lastPollAt: number | null
  expiresAt: number
}

export interface QueuedEvent {
  seq: number
  eventId: string
  type: string
  body: string
}

/** What the fan-out needs of an open session. */
export type OpenSession = Pick<SessionRow, 'id' | 'events'>

export interface ForwardingRepo {
  /** The key's secret, made (by `make`) when the key has none or its hash changed since. */
  secretFor(keyId: string, keyHash: string, make: () => string, now: number): Promise<string>
  insert(row: SessionRow): Promise<void>
  find(id: string): Promise<SessionRow | undefined>
  /** Open sessions of the key, with how many events wait in each. */
  listOpen(keyId: string, now: number): Promise<(SessionRow & { queued: number })[]>
  delete(id: string, keyId: string): Promise<boolean>
  /** Moves the session's expiry (a poll is its heartbeat); false when it has gone. */
  touch(id: string, now: number, expiresAt: number): Promise<boolean>
  /** Takes up to `limit` waiting events, oldest first, removing them. */
  take(sessionId: string, limit: number): Promise<QueuedEvent[]>
  /** Sessions that expired before `before`, with their queues. */
  pruneExpired(before: number): Promise<number>
}
