// What a check's lookups mean for a domain, and when to look again. Pure: the service feeds it the row, what
// DNS showed and the clock, and writes what it answers.
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../platform/time'
import type { DomainRow, SeenRecords } from './port'

export const CHALLENGE_PREFIX = '_lnk-challenge.'
/** A pending domain whose TXT record was not seen in this long fails. */
export const PENDING_FOR_MS = 7 * DAY_MS
/** A verified domain whose records stopped pointing here is still served this long. */
export const MISCONFIGURED_GRACE_MS = 7 * DAY_MS
/** At most one check of a domain this often on request (POST /domains/{id}/verify). */
export const VERIFY_EVERY_MS = 10_000

export interface PointingConfig {
  domainCnameTarget: string | null
  domainIps: string[]
}

export interface ExpectedRecord {
  type: 'TXT' | 'CNAME' | 'A' | 'AAAA'
  name: string
  value: string
}

/**
 * Two labels (example.com) is an apex, which cannot carry a CNAME: it points with A/AAAA. Anything longer is
 * taken for a subdomain. A name under a two-level public suffix (example.co.uk) is an apex too: such users
 * follow the A/AAAA advice, which every name can take, and the check accepts either way of pointing.
 */
export const isApex = (domain: string) => domain.split('.').length === 2

/** The records the user creates: the TXT proof, and a CNAME (subdomain) or A/AAAA (apex) pointing here. */
export function expectedRecords(domain: string, token: string, config: PointingConfig): ExpectedRecord[] {
  const records: ExpectedRecord[] = [{ type: 'TXT', name: `${CHALLENGE_PREFIX}${domain}`, value: token }]
  if (config.domainCnameTarget && !isApex(domain)) {
    records.push({ type: 'CNAME', name: domain, value: config.domainCnameTarget })
  } else {
    for (const ip of config.domainIps) records.push({ type: ip.includes(':') ? 'AAAA' : 'A', name: domain, value: ip })
  }
  return records
}

export type DnsVerdict = 'ok' | 'misconfigured' | 'conflicting'

/** The addresses the domain resolved to (A and AAAA together), null when a lookup failed. */
function addressesOf(seen: SeenRecords): string[] | null {
  if (seen.a === null || seen.aaaa === null) return null
  return [...seen.a, ...seen.aaaa]
}

/**
 * How the domain points, from the records alone: ok when the CNAME names the target or every address is
 * ours; conflicting when some addresses are ours and others not (part of the traffic goes elsewhere);
 * null when the records do not settle it (the HTTP check may, or a lookup failed).
 */
export function pointingByRecords(seen: SeenRecords, config: PointingConfig): DnsVerdict | null {
  if (config.domainCnameTarget && seen.cname?.includes(config.domainCnameTarget)) return 'ok'
  const addresses = addressesOf(seen)
  if (addresses?.length && config.domainIps.length) {
    const ours = addresses.filter((ip) => config.domainIps.includes(ip)).length
    if (ours === addresses.length) return 'ok'
    if (ours > 0) return 'conflicting'
  }
  return null
}

/** The verdict once the HTTP check (if made) is in; null when transient errors leave it open. */
export function pointing(seen: SeenRecords, config: PointingConfig): DnsVerdict | null {
  const byRecords = pointingByRecords(seen, config)
  if (byRecords) return byRecords
  if (seen.http?.reached) return 'ok'
  // Without an answer for every lookup, "not pointing here" may only be a resolver's bad moment.
  if (seen.errors.length) return null
  return 'misconfigured'
}

/** When the scheduled check after one at `now` runs, or null when the domain is no longer checked. */
export function nextCheckAt(row: Pick<DomainRow, 'verificationStatus' | 'dnsStatus' | 'createdAt' | 'misconfiguredAt'>, now: number): number | null {
  if (row.verificationStatus === 'failed') return null
  if (row.verificationStatus === 'verified') {
    const daily = now + DAY_MS
    // A misconfigured domain stops being served when its grace ends: look once more right then.
    const graceEnds = row.dnsStatus === 'misconfigured' && row.misconfiguredAt !== null ? row.misconfiguredAt + MISCONFIGURED_GRACE_MS : null
    return graceEnds !== null && graceEnds > now && graceEnds < daily ? graceEnds : daily
  }
  // Pending: +1, +5, +15 min after adding, then hourly to 72 h, then 6-hourly until the 7 days are up.
  const age = now - row.createdAt
  const after = (offset: number) => row.createdAt + offset
  for (const step of [MINUTE_MS, 5 * MINUTE_MS, 15 * MINUTE_MS]) if (age < step) return after(step)
  if (age < 72 * HOUR_MS) return after(Math.max(HOUR_MS, Math.floor(age / HOUR_MS + 1) * HOUR_MS))
  if (age < PENDING_FOR_MS) return after(Math.min(PENDING_FOR_MS, 72 * HOUR_MS + Math.floor((age - 72 * HOUR_MS) / (6 * HOUR_MS) + 1) * 6 * HOUR_MS))
  // Still pending after 7 days: the last check could not tell (a transient error), so look again.
  return now + 6 * HOUR_MS
}

/** Whether a domain in this state answers short links (and the TLS ask), at `now`. */
export function isServed(row: Pick<DomainRow, 'verificationStatus' | 'dnsStatus' | 'misconfiguredAt'>, now: number): boolean {
  if (row.verificationStatus !== 'verified') return false
  if (row.dnsStatus !== 'misconfigured') return true
  return row.misconfiguredAt !== null && now < row.misconfiguredAt + MISCONFIGURED_GRACE_MS
}

/** New links may be made on a verified domain that points here. */
export const acceptsNewLinks = (row: Pick<DomainRow, 'verificationStatus' | 'dnsStatus'>) => row.verificationStatus === 'verified' && row.dnsStatus === 'ok'
