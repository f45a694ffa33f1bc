import type { ScreenRoute } from '../types'

function Screen() {
  return <h1 tabIndex={-1}>Webhooks</h1>
}

export const routes: ScreenRoute[] = [{ path: '/webhooks', component: Screen, nav: { label: 'Webhooks', permission: 'webhooks:read' } }]
