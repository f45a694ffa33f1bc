// Set-up shared by the domain tests (not a test file itself): lnk with a manual clock pointed at a loopback
// DNS server, an account, and shorthands for the domain routes.
import { ManualClock } from '../../src/platform/clock'
import { body } from '../helpers'
import { webhooksEnv, type Env } from '../webhooks/_webhooks'
import { startDnsServer, type DnsServer } from './_dns'

export const CNAME_TARGET = 'cname.lnk-test.example'
export const OUR_IPS = ['203.0.113.10', '2001:db8::10']

export interface DomainsEnv extends Env {
  dns: DnsServer
  /** POST /domains; throws unless 201. */
  add(domain: string, extra?: Record<string, unknown>, key?: string): Promise<any>
  verify(id: string, key?: string): Promise<Response>
  get(id: string): Promise<any>
  /** Creates the records the domain asks for (TXT and the pointing ones) in the DNS server. */
  point(domain: any): void
  close(): Promise<void>
}

/** The settings that point lnk at the loopback DNS server, with the records a domain must show. */
export const domainsConfig = (dns: DnsServer) => ({
  LNK_DNS_SERVERS: dns.address,
  LNK_DOMAIN_CNAME_TARGET: CNAME_TARGET,
  LNK_DOMAIN_IPS: OUR_IPS.join(','),
  LNK_SHORT_DOMAINS: 'sho.rt,localhost:8080',
})

/** Creates the records `domain` (as the API answers it) asks for, TXT and the pointing ones, in the DNS server. */
export function pointRecords(dns: DnsServer, domain: any) {
  const records = domain.records as Array<{ type: 'TXT' | 'CNAME' | 'A' | 'AAAA'; name: string; value: string }>
  for (const r of records)
    dns.set(
      r.name,
      r.type,
      records.filter((o) => o.name === r.name && o.type === r.type).map((o) => o.value),
    )
}

export async function domainsEnv(env: Record<string, string> = {}, clock = new ManualClock(Date.UTC(2026, 10, 2, 9))): Promise<DomainsEnv> {
  const dns = await startDnsServer()
  const e = await webhooksEnv({ clock, env: { ...domainsConfig(dns), ...env } })
  return {
    ...e,
    dns,
    async add(domain, extra = {}, key = e.key) {
      const res = await e.api('/domains', { method: 'POST', key, json: { domain, ...extra } })
      const payload = await body(res)
      if (res.status !== 201) throw new Error(`domain not added: ${res.status} ${JSON.stringify(payload)}`)
      return payload.data
    },
    verify: (id, key = e.key) => e.api(`/domains/${id}/verify`, { method: 'POST', key }),
    async get(id) {
      return (await body(await e.api(`/domains/${id}`))).data
    },
    point: (domain) => pointRecords(dns, domain),
    async close() {
      await dns.close()
      await e.cleanup()
    },
  }
}
