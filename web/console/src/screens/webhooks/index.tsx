// The webhooks area: endpoints, their settings and secret, and their deliveries.
import type { ScreenRoute } from '../types'
import { DeliveryScreen } from './delivery'
import { EndpointScreen, NewEndpointScreen } from './endpoint'
import { EndpointsScreen } from './list'
import './webhooks.css'

export const routes: ScreenRoute[] = [
  { path: '/webhooks', component: EndpointsScreen, nav: { label: 'Webhooks', permission: 'webhooks:read' } },
  { path: '/webhooks/new', component: NewEndpointScreen },
  { path: '/webhooks/:id', component: EndpointScreen },
  { path: '/webhooks/:id/deliveries/:deliveryId', component: DeliveryScreen },
]
