// The domain record as GET /v1/domains/{id} answers it (docs/domains.md, "The record"), and the words and
// badge colours the screens show for its states.

export interface DnsRecord {
  type: string
  name: string
  value: string
  /** What the last check saw: [] nothing, null not looked yet or the lookup failed. */
  seen: string[] | null
  ok: boolean | null
}

export interface Domain {
  id: string
  domain: string
  unicodeDomain: string
  verificationStatus: 'pending' | 'verified' | 'failed'
  dnsStatus: 'unknown' | 'ok' | 'misconfigured' | 'conflicting'
  sslStatus: 'unmanaged' | 'pending' | 'active' | 'failed'
  served: boolean
  records: DnsRecord[]
  httpCheck: { url: string; reached: boolean; detail: string } | null
  lookupErrors: string[]
  failureReason: string | null
  lastCheckedAt: string | null
  nextCheckAt: string | null
  verifiedAt: string | null
  misconfiguredAt: string | null
  createdAt: string
}

type Tone = 'ok' | 'bad' | 'muted'

export const VERIFICATION: Record<Domain['verificationStatus'], [string, Tone]> = {
  pending: ['Pending', 'muted'],
  verified: ['Verified', 'ok'],
  failed: ['Failed', 'bad'],
}

export const DNS: Record<Domain['dnsStatus'], [string, Tone]> = {
  unknown: ['Not checked', 'muted'],
  ok: ['Points here', 'ok'],
  misconfigured: ['Misconfigured', 'bad'],
  conflicting: ['Conflicting', 'bad'],
}

export const SSL: Record<Domain['sslStatus'], [string, Tone]> = {
  unmanaged: ['Managed elsewhere', 'muted'],
  pending: ['Pending', 'muted'],
  active: ['Active', 'ok'],
  failed: ['Failed', 'bad'],
}

/** A state as a badge; the label says what the state means as well as its colour. */
export const Badge = ({ state, label }: { state: [string, Tone]; label: string }) => (
  <span class={`badge ${state[1]}`}>
    <span class="visually-hidden">{label}: </span>
    {state[0]}
  </span>
)

export const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—')
