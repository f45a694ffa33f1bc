// The tags area: every tag of the workspace with its link count, and (with links:write) create, rename,
// recolour and delete.
import type { ScreenRoute } from '../types'
import '../organisation.css'
import { TagsScreen } from './list'

export const routes: ScreenRoute[] = [{ path: '/tags', component: TagsScreen, nav: { label: 'Tags', permission: 'links:read' } }]
