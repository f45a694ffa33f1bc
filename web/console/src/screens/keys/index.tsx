// The API keys area: list, create with restrictions, and one key's details, actions and settings.
import type { ScreenRoute } from '../types'
import { KeyDetail } from './detail'
import './keys.css'
import { KeyList } from './list'
import { NewKey } from './new'

export const routes: ScreenRoute[] = [
  { path: '/keys', component: KeyList, nav: { label: 'API keys', permission: 'api_keys:read' } },
  { path: '/keys/new', component: NewKey },
  { path: '/keys/:id', component: KeyDetail },
]
