// Conversions and revenue summed per answer (a range, a bucket, a link), as every question reports them.
import type { ConversionFact } from './port'

export interface ConversionTotals {
  conversions: number
  revenue: Record<string, number>
}

export const emptyConversions = (): ConversionTotals => ({ conversions: 0, revenue: {} })

export function addConversion(t: ConversionTotals, c: ConversionFact) {
  t.conversions++
  if (c.currency !== null && c.value !== null) t.revenue[c.currency] = (t.revenue[c.currency] ?? 0) + c.value
}

/** Sums of float amounts, rounded past every currency's minor unit so 3 × 19.99 reads 59.97. */
export const tidy = (revenue: Record<string, number>) =>
  Object.fromEntries(
    Object.entries(revenue)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([c, v]) => [c, Math.round(v * 10_000) / 10_000]),
  )
