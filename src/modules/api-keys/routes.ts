import { Elysia, t } from 'elysia'
import { ModeQuery, type HttpKit } from '../identity'
import { Envelope, ErrorEnvelope, ok } from '../../http/envelope'
import type { ApiKeysCtx } from './service'
import { ApiKey } from '../identity/model'
import { CreateApiKeyBody, CreatedApiKey, EmptyBody, ReasonBody, RotateBody, UpdateApiKeyBody } from './model'
import { createApiKey, getApiKey, listApiKeys, pauseApiKey, resumeApiKey, revokeApiKey, rotateApiKey, updateApiKey } from './service'

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope, 429: ErrorEnvelope }
const Params = t.Object({ id: t.String() })

export function apiKeyRoutes(ctx: ApiKeysCtx, http: HttpKit) {
  return new Elysia({ name: 'lnk.api-keys', seed: http.instanceId, prefix: '/api-keys', tags: ['API keys'] })
    .use(http.auth)
    .get('/', async ({ caller, query }) => ok(await listApiKeys(ctx, caller, query.mode)), {
      permission: 'api_keys:read',
      query: t.Object({ mode: ModeQuery('API keys') }),
      response: { 200: Envelope(t.Array(ApiKey)), ...errors },
      detail: {
        summary: 'List API keys',
        description:
          "The workspace's keys of one mode, oldest first: the calling key's mode unless mode says otherwise (a live key may ask for test or all; a " +
          'test key sees test keys only). Secrets and their hashes are never returned.',
      },
    })
    .post(
      '/',
      async ({ caller, body, set }) => {
        set.status = 201
        return ok(await createApiKey(ctx, caller, body))
      },
      {
        permission: 'api_keys:write',
        idempotent: true,
        body: CreateApiKeyBody,
        response: { 201: Envelope(CreatedApiKey), ...errors },
        detail: {
          summary: 'Create an API key',
          description:
            'The secret is in `key`, shown only in this response. A key never creates a key wider than itself: permissions default to and cannot exceed ' +
            "the caller's, and a caller's own address ranges, scope, schedule, monthly cap and expiry are passed on. A test key only creates test " +
            'keys. Supports Idempotency-Key.',
        },
      },
    )
    .get('/:id', async ({ caller, params }) => ok(await getApiKey(ctx, caller, params.id)), {
      permission: 'api_keys:read',
      params: Params,
      response: { 200: Envelope(ApiKey), ...errors },
      detail: { summary: 'Get an API key' },
    })
    .patch('/:id', async ({ caller, params, body }) => ok(await updateApiKey(ctx, caller, params.id, body)), {
      permission: 'api_keys:write',
      params: Params,
      body: UpdateApiKeyBody,
      response: { 200: Envelope(ApiKey), ...errors },
      detail: {
        summary: 'Change an API key',
        description:
          'Name, permissions, allowedIps, scopeFilters, schedule, monthlyCallCap, rateLimitOverride, expiresAt. Never wider than the calling key; null clears.',
      },
    })
    .post('/:id/pause', async ({ caller, params, body }) => ok(await pauseApiKey(ctx, caller, params.id, body?.reason)), {
      permission: 'api_keys:write',
      params: Params,
      body: ReasonBody,
      response: { 200: Envelope(ApiKey), ...errors },
      detail: { summary: 'Pause an API key', description: 'Requests with the key get 403 key_paused until it is resumed. Optional reason.' },
    })
    .post('/:id/resume', async ({ caller, params }) => ok(await resumeApiKey(ctx, caller, params.id)), {
      permission: 'api_keys:write',
      params: Params,
      body: EmptyBody,
      response: { 200: Envelope(ApiKey), ...errors },
      detail: { summary: 'Resume a paused API key' },
    })
    .post('/:id/revoke', async ({ caller, params, body }) => ok(await revokeApiKey(ctx, caller, params.id, body?.reason)), {
      permission: 'api_keys:write',
      params: Params,
      body: ReasonBody,
      response: { 200: Envelope(ApiKey), ...errors },
      detail: { summary: 'Revoke an API key', description: 'Final: every request with the key gets 401 from now on. Optional reason.' },
    })
    .post('/:id/rotate', async ({ caller, params, body }) => ok(await rotateApiKey(ctx, caller, params.id, body?.graceHours)), {
      permission: 'api_keys:write',
      params: Params,
      body: RotateBody,
      response: { 200: Envelope(CreatedApiKey), ...errors },
      detail: {
        summary: 'Rotate an API key',
        description:
          'A new secret, shown once in `key`. The old secret keeps working for graceHours (default 24; 0 stops it at once); meanwhile the key shows ' +
          'rotating and graceHoursRemaining.',
      },
    })
}
