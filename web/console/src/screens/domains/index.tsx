import type { ScreenRoute } from '../types'
import { DomainDetail } from './detail'
import './domains.css'
import { DomainList } from './list'

export const routes: ScreenRoute[] = [
  { path: '/domains', component: DomainList, nav: { label: 'Domains', permission: 'domains:read' } },
  { path: '/domains/:id', component: DomainDetail },
]
