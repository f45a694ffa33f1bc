// Shapes of JSON columns that ports also hand out: plain types here, so a port names them without importing
// the tables (only db/ and repo files see those).

/** One condition of a routing rule (contract 7.1): `field` as listed there, `op` from webhook filters. */
export interface RoutingCondition {
  field: string
  op: string
  value?: unknown
}

/** A link's routing rule as stored and answered; the first whose conditions match picks the destination. */
export interface RoutingRule {
  id: string
  name: string | null
  match: 'all' | 'any'
  conditions: RoutingCondition[]
  destinationUrl: string
}

/** An A/B variant: its share of visitors is its weight over the sum of the link's weights. */
export interface Variant {
  id: string
  destinationUrl: string
  weight: number
}
