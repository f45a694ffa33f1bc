import { t } from 'elysia'
import { ApiKey } from '../identity/model'
import { PERMISSIONS } from '../identity/permissions'

export const Grant = t.Union([t.Literal('*'), ...PERMISSIONS.map((p) => t.Literal(p))], { description: 'A permission name, or * for all' })

export const CreateApiKeyBody = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 100 }),
    mode: t.Optional(t.Union([t.Literal('live'), t.Literal('test')], { description: "Defaults to the calling key's mode; a test key can only create test keys" })),
    permissions: t.Optional(t.Array(Grant, { minItems: 1, uniqueItems: true, description: "Defaults to the calling key's permissions; never wider than them" })),
    expiresAt: t.Optional(t.Union([t.String({ format: 'date-time' }), t.Null()])),
  },
  { additionalProperties: false },
)

export const CreatedApiKey = t.Composite([ApiKey, t.Object({ key: t.String({ description: 'The secret, shown only in this response' }) })], { title: 'CreatedApiKey' })
