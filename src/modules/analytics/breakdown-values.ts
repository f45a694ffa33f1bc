// The breakdown's pure parts: which countries make each continent (for the SQL that groups by continent)
// and which currency revenue ranks by when none is asked.
import { CONTINENTS, continentOf, type Continent } from '../../platform/continents'

export const BREAKDOWN_LIMIT = 50
export const BREAKDOWN_MAX = 1000

let members: [Continent, string[]][] | undefined
/** Each continent's country codes: every upper-case two-letter code the continent table places. */
export function continentMembers(): [Continent, string[]][] {
  if (!members) {
    const found = new Map<Continent, string[]>(CONTINENTS.map((c) => [c, []]))
    const A = 'A'.charCodeAt(0)
    for (let i = 0; i < 26; i++) {
      for (let j = 0; j < 26; j++) {
        const code = String.fromCharCode(A + i, A + j)
        const continent = continentOf(code)
        if (continent) found.get(continent)!.push(code)
      }
    }
    members = [...found]
  }
  return members
}

/** The currency most conversions were in (ties: alphabetical); null when none had a value. */
export function leadingCurrency(perCurrency: readonly { currency: string | null; conversions: number }[]): string | null {
  let best: { currency: string; conversions: number } | null = null
  for (const r of perCurrency) {
    if (r.currency === null) continue
    if (!best || r.conversions > best.conversions || (r.conversions === best.conversions && r.currency < best.currency))
      best = { currency: r.currency, conversions: r.conversions }
  }
  return best?.currency ?? null
}
