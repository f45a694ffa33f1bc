import type { ScreenRoute } from '../types'

function Screen() {
  return <h1 tabIndex={-1}>Bridge pages</h1>
}

export const routes: ScreenRoute[] = [{ path: '/pages', component: Screen, nav: { label: 'Bridge pages', permission: 'pages:read' } }]
