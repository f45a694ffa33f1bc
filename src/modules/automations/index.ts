// Automations: REST-hook subscriptions for Zapier and Make, and event samples. Subscriptions are rows of the
// webhooks area (kind rest_hook), so its fan-out, deliver job and pruning serve them with no wiring here.
import { defineModule, type Platform } from '../module'
import type { HttpKit } from '../identity'
import type { WebhooksModule } from '../webhooks'
import { engineOf } from '../../db/store'
import { createSamplesRepo } from './repo-samples'
import { automationRoutes } from './routes'
import type { AutomationsCtx } from './service'

export function createAutomationsModule(platform: Platform, http: HttpKit, webhooks: WebhooksModule) {
  const ctx: AutomationsCtx = { webhooks: webhooks.ctx, samples: { samples: createSamplesRepo(engineOf(platform.store)), clock: platform.clock } }
  return defineModule({ name: 'automations', ctx, routes: automationRoutes(ctx, http) })
}

export type AutomationsModule = ReturnType<typeof createAutomationsModule>
