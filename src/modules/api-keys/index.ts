// API keys: list, create, change, pause, resume, revoke and rotate, with the escalation rules.
import type { IdentityModule, HttpKit } from '../identity'
import { defineModule } from '../module'
import { apiKeyRoutes } from './routes'
import type { ApiKeysCtx } from './service'

// What other modules, the app and the CLI use of api-keys.
export { pauseApiKey, resumeApiKey, revokeApiKey, rotateApiKey, updateApiKey, type KeySettings } from './service'

export function createApiKeysModule(identity: IdentityModule, http: HttpKit) {
  const ctx: ApiKeysCtx = { ...identity.ctx, lastUsed: identity.lastUsed }
  return defineModule({ name: 'api-keys', ctx, routes: apiKeyRoutes(ctx, http) })
}
