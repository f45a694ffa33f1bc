// The links area: the list, create (one or in bulk), and one link's page with its QR code.
import type { ScreenRoute } from '../types'
import { BulkCreate } from './bulk'
import { EditLink, NewLink } from './edit'
import './links.css'
import { LinksList } from './list'

// Fixed paths before '/links/:id', which would match them too.
export const routes: ScreenRoute[] = [
  { path: '/links', component: LinksList, nav: { label: 'Links', permission: 'links:read' } },
  { path: '/links/new', component: NewLink },
  { path: '/links/bulk', component: BulkCreate },
  { path: '/links/:id', component: EditLink },
]
