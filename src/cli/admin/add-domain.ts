// `lnk admin add-domain`: a custom domain for a workspace, as POST /v1/domains adds it, and the DNS records
// to create.
import type { DomainView } from '../../modules/domains/model'
import { addDomain as addDomainTo } from '../../modules/domains'
import { AppError } from '../../platform/errors'
import { type AdminCommand, named, operatorIn, required, str, table, withRuntime, workspaceOf } from './shared'

const FLAG_OF: Record<string, string> = {
  domain: '--domain',
  rootRedirectUrl: '--root-redirect-url',
  notFoundUrl: '--not-found-url',
  expiredUrl: '--expired-url',
}

/** A refused body, its problems named by the flags that carried them (the service names the fields of the HTTP body). */
function asFlags(err: unknown): unknown {
  if (!(err instanceof AppError) || err.code !== 'validation_failed') return err
  const issues = (err.details?.issues ?? []) as { path: string; message: string }[]
  return new AppError(err.code, `Invalid options: ${issues.map((i) => `${FLAG_OF[i.path] ?? i.path}: ${i.message}`).join('; ')}`, err.details)
}

export const addDomain: AdminCommand = {
  name: 'add-domain',
  usage: '--workspace ID_OR_SLUG --domain D [--root-redirect-url U] [--not-found-url U] [--expired-url U] [--json]',
  summary: 'Add a custom domain; prints its id and the DNS records to create.',
  details: `Adds the custom domain D (e.g. go.example.com; lower-cased, an internationalised name converted to punycode;
no port, no IP address) to the workspace, as POST /v1/domains does, and prints its id and the DNS records to
create: the TXT record _lnk-challenge.D that proves control, and a CNAME to LNK_DOMAIN_CNAME_TARGET
(subdomain) or A/AAAA records for LNK_DOMAIN_IPS (apex). The domain is checked 1, 5 and 15 minutes later,
then hourly to 72 hours and 6-hourly to 7 days; 'lnk admin verify-domain ID' checks at once.
  --root-redirect-url U     where / on the domain goes (301)
  --not-found-url U         where an unknown slug goes (302)
  --expired-url U           where an expired or used-up link goes (302)
                            ({DOMAIN} and {ORIGINAL_PATH} are filled in)
With --json prints the domain object (the fields of GET /v1/domains/{id}).`,
  options: {
    workspace: { type: 'string' },
    domain: { type: 'string' },
    'root-redirect-url': { type: 'string' },
    'not-found-url': { type: 'string' },
    'expired-url': { type: 'string' },
    json: { type: 'boolean' },
  },
  positionals: 0,
  run: (c) =>
    withRuntime(c, async (rt) => {
      const { values, out } = c
      const workspace = await workspaceOf(rt.modules.identity.ctx.identity, required(values, 'workspace'))
      const input = {
        domain: required(values, 'domain'),
        rootRedirectUrl: str(values['root-redirect-url']),
        notFoundUrl: str(values['not-found-url']),
        expiredUrl: str(values['expired-url']),
      }
      let domain: DomainView
      try {
        domain = await addDomainTo(rt.modules.domains.ctx, operatorIn(workspace), input)
      } catch (err) {
        throw asFlags(err)
      }
      if (values.json === true) out(JSON.stringify(domain))
      else {
        out(`Added ${named(domain)} (${domain.id}) to "${workspace.name}". Create these DNS records, then run 'lnk admin verify-domain ${domain.id}':\n`)
        for (const line of table([['TYPE', 'NAME', 'VALUE'], ...domain.records.map((r) => [r.type, r.name, r.value])])) out(line)
        if (domain.records.length === 1) out(`\nPoint ${domain.domain} at this server too (LNK_DOMAIN_CNAME_TARGET or LNK_DOMAIN_IPS would name the record).`)
      }
      return 0
    }),
}
