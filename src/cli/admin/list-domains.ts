// `lnk admin list-domains`: custom domains of one workspace or of all, with their statuses.
import type { DomainView } from '../../modules/domains/model'
import { listDomains as listDomainsOf, toDomain } from '../../modules/domains'
import { type AdminCommand, named, operatorIn, str, table, withRuntime, workspaceOf } from './shared'

export const listDomains: AdminCommand = {
  name: 'list-domains',
  usage: '[--workspace ID_OR_SLUG] [--json]',
  summary: 'List custom domains with their verification, DNS and TLS status.',
  details: `Lists custom domains, oldest first (of every workspace unless --workspace is given): id, domain, workspace,
verification, DNS and TLS status, and whether short links answer on it now.
With --json prints an array of domain objects (the fields of GET /v1/domains), each with its workspaceId.`,
  options: { workspace: { type: 'string' }, json: { type: 'boolean' } },
  positionals: 0,
  run: (c) =>
    withRuntime(c, async (rt) => {
      const { out } = c
      const ctx = rt.modules.domains.ctx
      const ref = str(c.values.workspace)
      let domains: (DomainView & { workspaceId: string })[]
      if (ref) {
        const workspace = await workspaceOf(rt.modules.identity.ctx.identity, ref)
        domains = (await listDomainsOf(ctx, operatorIn(workspace))).map((d) => ({ ...d, workspaceId: workspace.id }))
      } else {
        domains = (await ctx.domains.list()).map((row) => ({ ...toDomain(ctx, row), workspaceId: row.workspaceId }))
      }
      if (c.values.json === true) out(JSON.stringify(domains))
      else if (!domains.length) out('No domains.')
      else {
        const rows = domains.map((d) => [
          d.id,
          named(d),
          d.workspaceId,
          d.verificationStatus,
          `dns ${d.dnsStatus}`,
          `ssl ${d.sslStatus}`,
          d.served ? 'served' : 'not served',
        ])
        for (const line of table(rows, '')) out(line)
      }
      return 0
    }),
}
