// TypeBox shapes of the identity area, shared by routes (validation) and OpenAPI.
import { t } from 'elysia'

const Timestamp = t.String({ format: 'date-time' })
const NullableTimestamp = t.Union([Timestamp, t.Null()])

export const User = t.Object({ id: t.String(), email: t.String(), name: t.Union([t.String(), t.Null()]), createdAt: Timestamp }, { title: 'User' })

export const Workspace = t.Object({ id: t.String(), slug: t.String(), name: t.String(), createdAt: Timestamp }, { title: 'Workspace' })

import { Schedule, ScopeFilters } from '../../platform/key-restrictions'

export { Schedule, ScopeFilters }

export const ApiKey = t.Object(
  {
    id: t.String(),
    name: t.String(),
    keyPrefix: t.String({ description: 'First 12 characters of the key; the secret itself is never returned' }),
    mode: t.Union([t.Literal('live'), t.Literal('test')]),
    permissions: t.Array(t.String()),
    allowedIps: t.Array(t.String()),
    scopeFilters: t.Union([ScopeFilters, t.Null()]),
    schedule: t.Union([Schedule, t.Null()]),
    monthlyCallCap: t.Union([t.Integer(), t.Null()]),
    rateLimitOverride: t.Union([t.Integer(), t.Null()]),
    expiresAt: NullableTimestamp,
    lastUsedAt: NullableTimestamp,
    lastUsedIp: t.Union([t.String(), t.Null()]),
    pausedAt: NullableTimestamp,
    pausedReason: t.Union([t.String(), t.Null()]),
    revokedAt: NullableTimestamp,
    revokedReason: t.Union([t.String(), t.Null()]),
    rotating: t.Boolean(),
    graceHoursRemaining: t.Integer({ minimum: 0 }),
    workspaceId: t.String(),
    createdAt: Timestamp,
  },
  { title: 'ApiKey' },
)

export const Me = t.Object(
  {
    user: User,
    workspace: t.Object({ id: t.String(), slug: t.String(), name: t.String(), createdAt: Timestamp, role: t.Union([t.Literal('owner'), t.Literal('member')]) }),
    workspaces: t.Array(t.Object({ id: t.String(), slug: t.String(), name: t.String(), role: t.Union([t.Literal('owner'), t.Literal('member')]) }), {
      description: "Every workspace of the key's user; X-Workspace-Id selects one",
    }),
    apiKey: t.Object({
      id: t.String(),
      name: t.String(),
      mode: t.Union([t.Literal('live'), t.Literal('test')]),
      permissions: t.Array(t.String()),
      keyPrefix: t.String(),
    }),
    usage: t.Object({
      month: t.String({ description: 'UTC calendar month, YYYY-MM' }),
      apiCalls: t.Integer({ description: 'Calls made with this key this month, this one included' }),
      monthlyCallCap: t.Union([t.Integer(), t.Null()]),
    }),
  },
  { title: 'Me' },
)
