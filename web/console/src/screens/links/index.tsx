import type { ScreenRoute } from '../types'

function Screen() {
  return <h1 tabIndex={-1}>Links</h1>
}

export const routes: ScreenRoute[] = [{ path: '/links', component: Screen, nav: { label: 'Links', permission: 'links:read' } }]
