// The event catalogue (contract section 5): every type an endpoint can subscribe to, with the JSON Schema of
// its `data`. Areas add their events here as they land; publish() refuses a type that is not listed, and
// /webhooks/types and /zapier/samples are generated from these schemas.
import { t, type TSchema } from 'elysia'

export interface EventDefinition {
  type: string
  description: string
  data: TSchema
}

export const EVENT_CATALOGUE: EventDefinition[] = [
  {
    type: 'webhook.test',
    description: 'A test ping sent on request to check an endpoint.',
    data: t.Object({ endpointId: t.String(), message: t.String() }),
  },
]

export const EVENT_TYPES = new Set(EVENT_CATALOGUE.map((e) => e.type))

export function eventEnvelopeSchema(def: EventDefinition) {
  return t.Object({
    id: t.String({ description: 'evt_… — unique per event' }),
    type: t.Literal(def.type),
    timestamp: t.String({ format: 'date-time' }),
    mode: t.Union([t.Literal('live'), t.Literal('test')]),
    data: def.data,
  })
}
