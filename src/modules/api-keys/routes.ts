import { Elysia, t } from 'elysia'
import { authPlugin } from '../../http/auth'
import { ModeQuery } from '../identity/sandbox'
import { Envelope, ErrorEnvelope, ok } from '../../http/envelope'
import { idempotent } from '../../http/idempotency'
import type { Runtime } from '../../runtime'
import { ApiKey } from '../identity/model'
import { CreateApiKeyBody, CreatedApiKey, EmptyBody, ReasonBody, RotateBody, UpdateApiKeyBody } from './model'
import { createApiKey, getApiKey, listApiKeys, pauseApiKey, resumeApiKey, revokeApiKey, rotateApiKey, updateApiKey } from './service'

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope, 429: ErrorEnvelope }
const Params = t.Object({ id: t.String() })

export function apiKeyRoutes(rt: Runtime) {
  return new Elysia({ name: 'lnk.api-keys', seed: rt.instanceId, prefix: '/api-keys', tags: ['API keys'] })
    .use(authPlugin(rt))
    .get('/', async ({ caller, query }) => ok(await listApiKeys(rt, caller, query.mode)), {
      permission: 'api_keys:read',
      query: t.Object({ mode: ModeQuery('API keys') }),
      response: { 200: Envelope(t.Array(ApiKey)), ...errors },
      detail: {
        summary: 'List API keys',
        description:
          "The workspace's keys of one mode, oldest first: the calling key's mode unless mode says otherwise (a live key may ask for test or all; a test key sees test keys only). Secrets and their hashes are never returned.",
      },
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
          description:
            "The secret is in `key`, shown only in this response. A key never creates a key wider than itself: permissions default to and cannot exceed the caller's, and a caller's own address ranges, scope, schedule, monthly cap and expiry are passed on. A test key only creates test keys. Supports Idempotency-Key.",
          'x-idempotent': true,
        },
      },
    )
    .get('/:id', async ({ caller, params }) => ok(await getApiKey(rt, caller, params.id)), {
      permission: 'api_keys:read',
      params: Params,
      response: { 200: Envelope(ApiKey), ...errors },
      detail: { summary: 'Get an API key' },
    })
    .patch('/:id', async ({ caller, params, body }) => ok(await updateApiKey(rt, caller, params.id, body)), {
      permission: 'api_keys:write',
      params: Params,
      body: UpdateApiKeyBody,
      response: { 200: Envelope(ApiKey), ...errors },
      detail: { summary: 'Change an API key', description: 'Name, permissions, allowedIps, scopeFilters, schedule, monthlyCallCap, rateLimitOverride, expiresAt. Never wider than the calling key; null clears.' },
    })
    .post('/:id/pause', async ({ caller, params, body }) => ok(await pauseApiKey(rt, caller, params.id, body?.reason)), {
      permission: 'api_keys:write',
      params: Params,
      body: ReasonBody,
      response: { 200: Envelope(ApiKey), ...errors },
      detail: { summary: 'Pause an API key', description: 'Requests with the key get 403 key_paused until it is resumed. Optional reason.' },
    })
    .post('/:id/resume', async ({ caller, params }) => ok(await resumeApiKey(rt, caller, params.id)), {
      permission: 'api_keys:write',
      params: Params,
      body: EmptyBody,
      response: { 200: Envelope(ApiKey), ...errors },
      detail: { summary: 'Resume a paused API key' },
    })
    .post('/:id/revoke', async ({ caller, params, body }) => ok(await revokeApiKey(rt, caller, params.id, body?.reason)), {
      permission: 'api_keys:write',
      params: Params,
      body: ReasonBody,
      response: { 200: Envelope(ApiKey), ...errors },
      detail: { summary: 'Revoke an API key', description: 'Final: every request with the key gets 401 from now on. Optional reason.' },
    })
    .post('/:id/rotate', async ({ caller, params, body }) => ok(await rotateApiKey(rt, caller, params.id, body?.graceHours)), {
      permission: 'api_keys:write',
      params: Params,
      body: RotateBody,
      response: { 200: Envelope(CreatedApiKey), ...errors },
      detail: {
        summary: 'Rotate an API key',
        description: 'A new secret, shown once in `key`. The old secret keeps working for graceHours (default 24; 0 stops it at once); meanwhile the key shows rotating and graceHoursRemaining.',
      },
    })
}
