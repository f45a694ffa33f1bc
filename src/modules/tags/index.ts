// Tags as resources (contract 7.3): a workspace's tag names with colours and link counts. Links keep tag names;
// a link write making a new name a tag calls ensuringTags in its own transaction.
import { engineOf } from '../../db/store'
import type { HttpKit } from '../identity'
import { defineModule, type Platform } from '../module'
import { TAG_EVENTS } from './model'
import { createTagsRepo } from './repo'
import { tagRoutes } from './routes'
import type { TagsCtx } from './service'

export { ensuringTags } from './repo'
export type { TagsRepo, TagRow } from './port'
export type { TagsCtx } from './service'

export function createTagsModule(platform: Platform, http: HttpKit) {
  const { config, clock, log, store } = platform
  const ctx: TagsCtx = { config, clock, log, tags: createTagsRepo(engineOf(store)) }
  return defineModule({ name: 'tags', events: TAG_EVENTS, ctx, repo: ctx.tags, routes: tagRoutes(ctx, http) })
}

export type TagsModule = ReturnType<typeof createTagsModule>
