// The folders area: every folder with its link count, and (with links:write) create, rename and delete.
import type { ScreenRoute } from '../types'
import '../organisation.css'
import { FoldersScreen } from './list'

export const routes: ScreenRoute[] = [{ path: '/folders', component: FoldersScreen, nav: { label: 'Folders', permission: 'links:read' } }]
