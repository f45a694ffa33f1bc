import type { ScreenRoute } from '../types'

function Screen() {
  return <h1 tabIndex={-1}>Analytics</h1>
}

export const routes: ScreenRoute[] = [{ path: '/analytics', component: Screen, nav: { label: 'Analytics', permission: 'analytics:read' } }]
