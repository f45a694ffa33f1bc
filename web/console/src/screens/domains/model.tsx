// The domain record as GET /v1/domains/{id} answers it (docs/domains.md, "The record"), and the words and
// badge colours the screens show for its states.
import type { Data } from '../../api-types'

/** A custom domain as GET /v1/domains/{id} answers it. */
export type Domain = Data<'/domains/{id}', 'get'>
/** A DNS record to create; `seen` is what the last check saw: [] nothing, null not looked yet or the lookup failed. */
export type DnsRecord = Domain['records'][number]

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
