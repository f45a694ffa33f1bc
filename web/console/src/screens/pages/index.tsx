import type { ScreenRoute } from '../types'
import { PageEditor } from './editor'
import { PageList } from './list'
import './pages.css'
import { TemplateGallery } from './templates'

// '/pages/templates' comes before '/pages/:id', which would otherwise take it.
export const routes: ScreenRoute[] = [
  { path: '/pages', component: PageList, nav: { label: 'Bridge pages', permission: 'pages:read' } },
  { path: '/pages/templates', component: TemplateGallery },
  { path: '/pages/:id', component: PageEditor },
]
