// Wall-clock times in a named time zone, for the rule editor's time conditions: a datetime-local input says
// nothing about its zone, so the editor keeps the zone beside it and turns the pair into an instant here,
// with the browser's own zone data (Intl) rather than a library.

export const VIEWER_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone

let zones: string[] | undefined
/** The zones the browser knows, UTC and the viewer's own included. */
export function timeZones(): readonly string[] {
  if (zones) return zones
  const known = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : []
  zones = [...new Set(['UTC', VIEWER_ZONE, ...known])].sort()
  return zones
}

const formatters = new Map<string, Intl.DateTimeFormat>()
function partsIn(zone: string, at: number): Record<string, number> {
  let f = formatters.get(zone)
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
    formatters.set(zone, f)
  }
  const out: Record<string, number> = {}
  for (const p of f.formatToParts(at)) if (p.type !== 'literal') out[p.type] = Number(p.value)
  return out
}

/** How far the zone's wall clock is ahead of UTC at that instant, in ms. */
function offsetAt(zone: string, at: number): number {
  const p = partsIn(zone, at)
  return Date.UTC(p.year ?? 1970, (p.month ?? 1) - 1, p.day ?? 1, p.hour ?? 0, p.minute ?? 0, p.second ?? 0) - Math.floor(at / 1000) * 1000
}

/** A datetime-local value read in `zone` as an ISO instant; text that does not read goes as typed, for the server to name. */
export function fromZonedInput(local: string, zone: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(local.trim())
  if (!m) return local
  let wall: number
  try {
    wall = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6] ?? 0))
    // The offset at the guess can differ from the one at the answer around a clock change: check once more.
    let at = wall - offsetAt(zone, wall)
    at = wall - offsetAt(zone, at)
    return new Date(at).toISOString()
  } catch {
    return local
  }
}

/** An instant as the datetime-local value of its wall-clock time in `zone`; text that is no instant stays as it is. */
export function toZonedInput(iso: string, zone: string): string {
  const at = Date.parse(iso)
  if (!Number.isFinite(at)) return iso
  let p: Record<string, number>
  try {
    p = partsIn(zone, at)
  } catch {
    return iso
  }
  const two = (n: number | undefined) => String(n ?? 0).padStart(2, '0')
  // Seconds only when there are some, so a rule sent back unchanged keeps its instant.
  return `${p.year}-${two(p.month)}-${two(p.day)}T${two(p.hour)}:${two(p.minute)}${p.second ? `:${two(p.second)}` : ''}`
}
