// API keys: list, create, change, pause, resume, revoke and rotate, with the escalation rules.
import type { IdentityModule } from '../identity'
import { defineModule, type HttpKit } from '../module'
import { apiKeyRoutes } from './routes'
import type { ApiKeysCtx } from './service'

export function createApiKeysModule(identity: IdentityModule, http: HttpKit) {
  const ctx: ApiKeysCtx = { ...identity.ctx, lastUsed: identity.lastUsed }
  return defineModule({ name: 'api-keys', ctx, routes: apiKeyRoutes(ctx, http) })
}
