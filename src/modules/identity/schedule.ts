// Key schedules: an IANA time zone, the days of the week (0 = Sunday) and a window of minutes since local
// midnight. A window whose start is after its end wraps midnight; its part after midnight belongs to the
// day it started on (Friday 22:00-02:00 admits Saturday 01:00 when Friday is listed).
import type { Schedule } from './model'

const WEEKDAYS: Record<string, number> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 }
const formatters = new Map<string, Intl.DateTimeFormat>()

/** The days a schedule may name, 0 = Sunday: the OpenAPI document's enum and the service's check alike. */
export const DAYS = [0, 1, 2, 3, 4, 5, 6] as const

/**
 * A zone name the runtime's time zone data knows (aliases and any capitalisation included). Intl also reads
 * offsets ("+01:00"), which name no IANA zone: a name starts with a letter (http/time-zone.ts says what the
 * document states).
 */
export function isValidTimeZone(tz: string): boolean {
  if (!/^[A-Za-z]/.test(tz)) return false
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz })
    return true
  } catch {
    return false
  }
}

/** The weekday and minute of the day at `ms` in the time zone. */
export function localTime(ms: number, timezone: string): { day: number; minute: number } {
  let f = formatters.get(timezone)
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: timezone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
    formatters.set(timezone, f)
  }
  const parts = Object.fromEntries(f.formatToParts(new Date(ms)).map((p) => [p.type, p.value]))
  return { day: WEEKDAYS[parts.weekday!]!, minute: Number(parts.hour) * 60 + Number(parts.minute) }
}

export function withinSchedule(s: Schedule, ms: number): boolean {
  const { day, minute } = localTime(ms, s.timezone)
  if (s.startMinute === s.endMinute) return false
  if (s.startMinute < s.endMinute) return s.days.includes(day) && minute >= s.startMinute && minute < s.endMinute
  if (minute >= s.startMinute) return s.days.includes(day)
  if (minute < s.endMinute) return s.days.includes((day + 6) % 7)
  return false
}
