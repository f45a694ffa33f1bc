import { t } from 'elysia'
import { ApiKey, Schedule, ScopeFilters } from '../identity/model'
import { PERMISSIONS } from '../identity'

export const Grant = t.Union([t.Literal('*'), ...PERMISSIONS.map((p) => t.Literal(p))], { description: 'A permission name, or * for all' })

const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(schema: T, description?: string) => t.Optional(t.Union([schema, t.Null()], description ? { description } : {}))

/** The settings a key can be created or changed with (spec 2.7), shared by POST and PATCH. */
const settings = {
  permissions: t.Optional(t.Array(Grant, { minItems: 1, uniqueItems: true, description: "Defaults to the calling key's permissions; never wider than them" })),
  allowedIps: t.Optional(t.Array(t.String({ maxLength: 64 }), { maxItems: 100, description: 'IPv4/IPv6 addresses or CIDRs the key may be used from; empty means any' })),
  scopeFilters: Nullable(ScopeFilters, 'Links the key may see and change: by domain and/or tag'),
  schedule: Nullable(Schedule, 'When the key works: IANA time zone, days (0 = Sunday) and a minute window; start > end wraps midnight'),
  monthlyCallCap: Nullable(t.Integer({ minimum: 1 }), 'Calls per UTC calendar month'),
  rateLimitOverride: Nullable(t.Integer({ minimum: 1, maximum: 100_000 }), 'Requests per minute, replacing the default 600'),
  expiresAt: Nullable(t.String({ format: 'date-time' })),
}

export const CreateApiKeyBody = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 100 }),
    mode: t.Optional(t.Union([t.Literal('live'), t.Literal('test')], { description: "Defaults to the calling key's mode; a test key can only create test keys" })),
    ...settings,
  },
  { additionalProperties: false },
)

export const UpdateApiKeyBody = t.Object({ name: t.Optional(t.String({ minLength: 1, maxLength: 100 })), ...settings }, { additionalProperties: false, minProperties: 1 })

// The bodies of the key actions are optional: the action is the path, and what a body adds has a default.

/** Resume takes nothing; a body, when sent, is an empty object (anything in it is refused, not ignored). */
export const EmptyBody = t.Optional(t.Object({}, { additionalProperties: false }))

export const ReasonBody = t.Optional(t.Object({ reason: t.Optional(t.String({ maxLength: 500 })) }, { additionalProperties: false }))

export const RotateBody = t.Optional(
  t.Object(
    { graceHours: t.Optional(t.Integer({ minimum: 0, maximum: 720, description: 'Hours the old secret keeps working (default 24; 0 stops it at once)' })) },
    { additionalProperties: false },
  ),
)

export const CreatedApiKey = t.Composite([ApiKey, t.Object({ key: t.String({ description: 'The secret, shown only in this response' }) })], { title: 'CreatedApiKey' })
