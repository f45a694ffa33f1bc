import type { ScreenRoute } from '../types'

function Screen() {
  return <h1 tabIndex={-1}>API keys</h1>
}

export const routes: ScreenRoute[] = [{ path: '/keys', component: Screen, nav: { label: 'API keys', permission: 'api_keys:read' } }]
