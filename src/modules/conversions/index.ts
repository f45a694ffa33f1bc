// The public conversion beacon: attributes a sale or sign-up to the click that brought the visitor.
import { defineModule, type Platform } from '../module'
import { type HttpKit, rateLimitFor } from '../identity'
import { engineOf } from '../../db/store'
import { createConversionsRepo } from './repo'
import { conversionRoutes } from './routes'
import type { ConversionsCtx } from './service'
import { CONVERSION_EVENTS } from './model'

/** `flushClicks` writes the clicks still held in memory: a beacon can overtake its click's flush. */
export function createConversionsModule(platform: Platform, http: HttpKit, flushClicks: () => Promise<void>) {
  const { config, store, clock, log } = platform
  const ctx: ConversionsCtx = { config, clock, log, conversions: createConversionsRepo(engineOf(store)), flushClicks }
  return defineModule({ name: 'conversions', events: CONVERSION_EVENTS, ctx, routes: conversionRoutes(ctx, http, rateLimitFor(store, 'conversions')) })
}
