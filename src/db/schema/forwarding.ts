// Local forwarding: a signing secret per API key (the same across sessions until the key's secret changes),
// the sessions a developer's `lnk listen` polls, and the events queued for each until a poll takes them.
import { index, int, json, table, text, time } from '../columns'
import { apiKeys, workspaces } from './identity'

export const cliSecrets = table('cli_secrets', {
  keyId: text('key_id')
    .primaryKey()
    .references(() => apiKeys.id, { onDelete: 'cascade' }),
  /** The key's hash when the secret was made: a rotated key (another hash) gets a new secret. */
  keyHash: text('key_hash').notNull(),
  secret: text('secret').notNull(),
  createdAt: time('created_at').notNull(),
})

export const cliSessions = table(
  'cli_sessions',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    keyId: text('key_id')
      .notNull()
      .references(() => apiKeys.id, { onDelete: 'cascade' }),
    mode: text('mode', { enum: ['live', 'test'] }).notNull(),
    events: json<string[]>('events').notNull(),
    deviceName: text('device_name'),
    /** Events that did not fit the queue. */
    dropped: int('dropped').notNull(),
    createdAt: time('created_at').notNull(),
    lastPollAt: time('last_poll_at'),
    expiresAt: time('expires_at').notNull(),
  },
  (t) => [index('cli_sessions_workspace_idx').on(t.workspaceId, t.mode, t.expiresAt)],
)

export const cliSessionEvents = table(
  'cli_session_events',
  {
    seq: int('seq').primaryKey({ autoIncrement: true }),
    sessionId: text('session_id')
      .notNull()
      .references(() => cliSessions.id, { onDelete: 'cascade' }),
    eventId: text('event_id').notNull(),
    type: text('type').notNull(),
    /** The event envelope as the JSON text handed over (signed as is). */
    body: text('body').notNull(),
    createdAt: time('created_at').notNull(),
  },
  (t) => [index('cli_session_events_session_idx').on(t.sessionId, t.seq)],
)
