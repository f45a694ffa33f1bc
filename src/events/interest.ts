// Whether anyone would receive an event. Most events are rare and always go to the outbox; an event written
// thousands of times a second (link.clicked) is written only when something listens for it in its
// workspace and mode, so a click nobody subscribed to costs no outbox row, no dispatch and no pruning. Each
// area that consumes the outbox (webhook endpoints; later forwarding sessions and REST hooks) adds a source
// answering from what it keeps in memory.
import type { EventEnvelope } from './outbox'

export type Mode = EventEnvelope['mode']

/** Answers synchronously and cheaply: it runs on the redirect path, once per click. */
export type InterestSource = (type: string, workspaceId: string, mode: Mode) => boolean

export class EventInterest {
  private readonly sources: InterestSource[] = []

  add(source: InterestSource) {
    this.sources.push(source)
  }

  wants(type: string, workspaceId: string, mode: Mode): boolean {
    for (const source of this.sources) if (source(type, workspaceId, mode)) return true
    return false
  }
}
