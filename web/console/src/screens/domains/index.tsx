import type { ScreenRoute } from '../types'

function Screen() {
  return <h1 tabIndex={-1}>Domains</h1>
}

export const routes: ScreenRoute[] = [{ path: '/domains', component: Screen, nav: { label: 'Domains', permission: 'domains:read' } }]
