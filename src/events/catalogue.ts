// The event types the outbox accepts (contract section 5). Each module declares the events it publishes, with
// the JSON Schema of their `data` (Module.events, beside its models); the runtime registers them here as it
// builds the modules, and publish() refuses a type no module registered. The list subscribers choose from is
// the webhooks module's (webhooks/model.ts: EVENT_CATALOGUE).
import type { TSchema } from 'elysia'

export interface EventDefinition {
  type: string
  description: string
  data: TSchema
}

const registered = new Map<string, EventDefinition>()

/**
 * Adds a module's events. Registering the same definition again is a no-op (tests build many runtimes in one
 * process); another definition of a registered type is a mistake of the code, refused.
 */
export function registerEvents(definitions: readonly EventDefinition[]): void {
  for (const def of definitions) {
    const known = registered.get(def.type)
    if (known && known !== def) throw new Error(`event type "${def.type}" is declared by two modules`)
    registered.set(def.type, def)
  }
}

export const isRegisteredEvent = (type: string): boolean => registered.has(type)
