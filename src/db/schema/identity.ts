import { index, int, json, primaryKey, table, text, time, uniqueIndex } from '../columns'
import type { Schedule, ScopeFilters } from '../../platform/key-restrictions'

export const users = table(
  'users',
  {
    id: text('id').primaryKey(),
    email: text('email').notNull(),
    name: text('name'),
    createdAt: time('created_at').notNull(),
  },
  (t) => [uniqueIndex('users_email_unique').on(t.email)],
)

export const workspaces = table(
  'workspaces',
  {
    id: text('id').primaryKey(),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    createdAt: time('created_at').notNull(),
  },
  (t) => [uniqueIndex('workspaces_slug_unique').on(t.slug)],
)

export const memberships = table(
  'memberships',
  {
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    role: text('role', { enum: ['owner', 'member'] }).notNull(),
    createdAt: time('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.userId] }), index('memberships_user_idx').on(t.userId)],
)

export type { Schedule, ScopeFilters }

/** Every field of spec 2.7; rotation keeps the previous secret's hash until its grace ends. */
export const apiKeys = table(
  'api_keys',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    keyHash: text('key_hash').notNull(),
    keyPrefix: text('key_prefix').notNull(),
    mode: text('mode', { enum: ['live', 'test'] }).notNull(),
    permissions: json<string[]>('permissions').notNull(),
    allowedIps: json<string[]>('allowed_ips').notNull(),
    scopeFilters: json<ScopeFilters | null>('scope_filters'),
    schedule: json<Schedule | null>('schedule'),
    monthlyCallCap: int('monthly_call_cap'),
    rateLimitOverride: int('rate_limit_override'),
    expiresAt: time('expires_at'),
    lastUsedAt: time('last_used_at'),
    lastUsedIp: text('last_used_ip'),
    pausedAt: time('paused_at'),
    pausedReason: text('paused_reason'),
    revokedAt: time('revoked_at'),
    revokedReason: text('revoked_reason'),
    previousKeyHash: text('previous_key_hash'),
    previousKeyExpiresAt: time('previous_key_expires_at'),
    rotatedAt: time('rotated_at'),
    createdAt: time('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('api_keys_key_hash_unique').on(t.keyHash),
    index('api_keys_previous_key_hash_idx').on(t.previousKeyHash),
    index('api_keys_workspace_idx').on(t.workspaceId),
  ],
)

/** Calls per key per UTC calendar month: `/me` usage and `monthlyCallCap`. */
export const apiKeyUsage = table(
  'api_key_usage',
  {
    keyId: text('key_id')
      .notNull()
      .references(() => apiKeys.id, { onDelete: 'cascade' }),
    month: text('month').notNull(),
    calls: int('calls').notNull(),
  },
  (t) => [primaryKey({ columns: [t.keyId, t.month] })],
)
