import { Elysia, t } from 'elysia'
import { authPlugin } from '../../http/auth'
import { Envelope, ErrorEnvelope, ok } from '../../http/envelope'
import { idempotent } from '../../http/idempotency'
import type { Runtime } from '../../runtime'
import { ApiKey } from '../identity/model'
import { CreateApiKeyBody, CreatedApiKey } from './model'
import { createApiKey, listApiKeys } from './service'

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 409: ErrorEnvelope, 429: ErrorEnvelope }

export function apiKeyRoutes(rt: Runtime) {
  return new Elysia({ name: 'lnk.api-keys', seed: rt.instanceId, prefix: '/api-keys', tags: ['API keys'] })
    .use(authPlugin(rt))
    .get('/', async ({ caller }) => ok(await listApiKeys(rt, caller)), {
      permission: 'api_keys:read',
      response: { 200: Envelope(t.Array(ApiKey)), ...errors },
      detail: { summary: 'List API keys', description: 'Every key of the workspace, oldest first. Secrets and their hashes are never returned.' },
    })
    .post(
      '/',
      async ({ caller, body, request, set }) => {
        set.status = 201
        return idempotent(rt, caller, request, body, set, async () => ok(await createApiKey(rt, caller, body)))
      },
      {
        permission: 'api_keys:write',
        body: CreateApiKeyBody,
        response: { 201: Envelope(CreatedApiKey), ...errors },
        detail: {
          summary: 'Create an API key',
          description: "The secret is in `key`, shown only in this response. Permissions default to, and can never exceed, the calling key's; a test key only creates test keys. Supports Idempotency-Key.",
        },
      },
    )
}
