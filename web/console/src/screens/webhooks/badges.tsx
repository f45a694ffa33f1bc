import type { ComponentChildren } from 'preact'
import { DELIVERY_BADGE, type DeliveryStatus } from './model'

export const Badge = ({ kind, children }: { kind: string; children: ComponentChildren }) => <span class={`badge ${kind}`}>{children}</span>

export const DeliveryBadge = ({ status }: { status: DeliveryStatus }) => <Badge kind={DELIVERY_BADGE[status]}>{status}</Badge>
