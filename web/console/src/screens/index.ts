// Every screen of the console, by area; each area's folder owns its routes.
import { routes as analytics } from './analytics'
import { routes as domains } from './domains'
import { routes as folders } from './folders'
import { routes as keys } from './keys'
import { routes as links } from './links'
import { routes as pages } from './pages'
import { routes as tags } from './tags'
import type { ScreenRoute } from './types'
import { routes as webhooks } from './webhooks'

export const SCREENS: ScreenRoute[] = [...links, ...folders, ...tags, ...analytics, ...domains, ...pages, ...webhooks, ...keys]
