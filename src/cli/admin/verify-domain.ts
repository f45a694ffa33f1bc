// `lnk admin verify-domain`: a domain's DNS checked now, as POST /v1/domains/{id}/verify checks it.
import { domainNotFound } from '../../modules/domains'
import type { DomainView } from '../../modules/domains/model'
import { verifyDomain as verifyDomainNow } from '../../modules/domains'
import { type AdminCommand, named, operatorIn, table, withRuntime, workspaceOf } from './shared'

/** What the check saw at the record's name, and whether the value was among it. */
function seenText(r: DomainView['records'][number]): [string, string] {
  if (r.seen === null) return ['(lookup failed)', '-']
  return [r.seen.length ? r.seen.join(', ') : '(none)', r.ok ? 'ok' : r.seen.length ? 'differs' : 'missing']
}

function domainReport(d: DomainView): string[] {
  const lines = [`${named(d)} (${d.id}): verification ${d.verificationStatus}, dns ${d.dnsStatus}, ssl ${d.sslStatus}, ${d.served ? 'served' : 'not served'}`]
  lines.push(...table([['TYPE', 'NAME', 'EXPECTED', 'SEEN', ''], ...d.records.map((r) => [r.type, r.name, r.value, ...seenText(r)])]))
  if (d.httpCheck) lines.push(`HTTP check ${d.httpCheck.url}: ${d.httpCheck.reached ? 'reached this instance' : 'not reached'} (${d.httpCheck.detail})`)
  if (d.failureReason) lines.push(`Failed: ${d.failureReason}`)
  lines.push(d.nextCheckAt ? `Next scheduled check: ${d.nextCheckAt}` : 'No further checks are scheduled.')
  return lines
}

export const verifyDomain: AdminCommand = {
  name: 'verify-domain',
  usage: 'ID [--json]',
  summary: "Check the domain's DNS now; prints its statuses and each record expected and seen.",
  details: `Looks at the domain's DNS now, as POST /v1/domains/{id}/verify does, and prints its verification, DNS and
TLS status and each record expected and seen. At most one check per 10 seconds per domain. DNS is asked
through LNK_DNS_SERVERS (host:port, comma-separated; default: the system's resolvers).
With --json prints the domain object.`,
  options: { json: { type: 'boolean' } },
  positionals: 1,
  run: (c) =>
    withRuntime(c, async (rt) => {
      const ctx = rt.modules.domains.ctx
      const id = c.positionals[0]!
      // The id alone names the domain, as a key's id does for the key commands: act in its own workspace.
      const row = await ctx.domains.findAnyById(id)
      if (!row) throw domainNotFound(id)
      const domain = await verifyDomainNow(ctx, operatorIn(await workspaceOf(rt.modules.identity.ctx.identity, row.workspaceId)), row.id)
      if (c.values.json === true) c.out(JSON.stringify(domain))
      else for (const line of domainReport(domain)) c.out(line)
      return 0
    }),
}
