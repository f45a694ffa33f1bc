// TypeBox schemas of the domains area: the custom domain of spec 2.4 with its DNS state, and the request
// bodies. Hostname rules and URL checks are the service's, so every problem is named at once.
import { t, type Static } from 'elysia'
import type { EventDefinition } from '../../events/catalogue'
import { documentOnly, HTTP_URL_PATTERN } from '../../http/published-schema'

const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(schema: T, options: Record<string, unknown> = {}) => t.Union([schema, t.Null()], options)
const Timestamp = (description: string) => Nullable(t.String({ format: 'date-time' }), { description })

// The document states the rules the service checks: a fallback URL is an absolute http(s) URL (format uri, and
// a pattern for the scheme and host), a domain a hostname whose last label is no number (so no IP address).
// The lengths are the route's to enforce; format and pattern the service's (addDomain names every problem at
// once), so the placeholders and an internationalised domain, which neither keyword admits, still work, as
// the descriptions say.
const FALLBACK_HELP =
  'Absolute http(s) URL of 1-2048 characters; {DOMAIN} and {ORIGINAL_PATH} (the path without its leading slash) are filled in, braces and all, though ' +
  'braces are no URI characters; read as browsers read URLs (WHATWG). null: the default page.'
const FallbackUrl = (what: string) =>
  t.Optional(
    Nullable(t.String({ minLength: 1, maxLength: 2048, ...documentOnly({ format: 'uri', pattern: HTTP_URL_PATTERN }) }), {
      description: `${what} ${FALLBACK_HELP}`,
    }),
  )

// One label: letters, digits and inner hyphens, 1-63 characters; not an ACE label (xn--…), whose punycode the
// service decodes and may refuse. The last label must not read as a number (12, 0x1f): a URL parser takes such
// a host for an IPv4 address. A trailing dot names the same host.
const LABEL = '(?![Xx][Nn]--)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?'
export const HOSTNAME_PATTERN = `^(?:${LABEL}\\.)+(?![0-9]+\\.?$)(?!0[Xx][0-9A-Fa-f]*\\.?$)${LABEL}\\.?$`

export const VerificationStatus = t.Union([t.Literal('pending'), t.Literal('verified'), t.Literal('failed')], {
  description: 'pending until the TXT record is seen; verified once it is; failed after 7 days pending or when another workspace verified the domain first',
})
export const DnsStatus = t.Union([t.Literal('unknown'), t.Literal('ok'), t.Literal('misconfigured'), t.Literal('conflicting')], {
  description:
    "unknown until a check could tell; ok when the CNAME names the target, every A/AAAA address is one of this service's, or " +
    "http://<domain>/.well-known/lnk/<token> reaches this instance; conflicting when some addresses are this service's and others not; " +
    'misconfigured otherwise',
})
export const SslStatus = t.Union([t.Literal('unmanaged'), t.Literal('pending'), t.Literal('active'), t.Literal('failed')], {
  description:
    'unmanaged when a proxy of the operator terminates TLS (LNK_TLS_MODE=external); with Caddy: pending until a request arrived over HTTPS, active ' +
    'after, failed when the domain is not served (no certificate will be issued)',
})

export const DomainRecord = t.Object({
  type: t.Union([t.Literal('TXT'), t.Literal('CNAME'), t.Literal('A'), t.Literal('AAAA')]),
  name: t.String({ description: 'The name to create the record at' }),
  value: t.String({ description: 'The value to give it' }),
  seen: Nullable(t.Array(t.String()), {
    description: 'What the last check found at that name for that type ([] none); null before a check, or when the lookup failed',
  }),
  ok: Nullable(t.Boolean(), { description: 'Whether the last check found the value; null before a check or when the lookup failed' }),
})

export const Domain = t.Object({
  id: t.String({ description: 'dom_…' }),
  domain: t.String({ description: 'The hostname, lower case; an internationalised name in its ASCII (punycode) form' }),
  unicodeDomain: t.String({ description: 'The hostname as people read it' }),
  verificationStatus: VerificationStatus,
  dnsStatus: DnsStatus,
  sslStatus: SslStatus,
  served: t.Boolean({ description: 'Whether short links answer on it now: verified, and not misconfigured for more than 7 days' }),
  records: t.Array(DomainRecord, { description: 'The DNS records to create, with what the last check saw' }),
  httpCheck: Nullable(t.Object({ url: t.String(), reached: t.Boolean(), detail: t.String() }), {
    description: 'The plain-HTTP reachability check of the last check, when the records alone did not show the domain pointing here',
  }),
  lookupErrors: t.Array(t.String(), {
    description:
      'Lookups of the last check that failed for a transient reason (timeout, SERVFAIL), e.g. "TXT _lnk-challenge.go.example.com: ETIMEOUT"; such a ' +
      'check changes no status',
  }),
  failureReason: Nullable(t.String()),
  rootRedirectUrl: Nullable(t.String(), { description: 'Where / goes (301); null: a minimal page' }),
  notFoundUrl: Nullable(t.String(), { description: 'Where an unknown slug goes (302); null: the 404 page' }),
  expiredUrl: Nullable(t.String(), { description: 'Where an expired or used-up link without a fallbackUrl goes (302); null: the 410 page' }),
  lastCheckedAt: Timestamp('When DNS was last looked at'),
  nextCheckAt: Timestamp('When the next scheduled check runs; null when no more are scheduled'),
  verifiedAt: Timestamp('When the TXT record was first seen'),
  misconfiguredAt: Timestamp('When a verified domain stopped pointing here; it is served until 7 days after'),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
})

export const CreateDomainBody = t.Object(
  {
    domain: t.String({
      minLength: 1,
      maxLength: 253,
      ...documentOnly({ format: 'hostname', pattern: HOSTNAME_PATTERN }),
      description:
        'A hostname you control, e.g. go.example.com: at least two labels, the last not a number (no IP address), no port; lower-cased. An ' +
        'internationalised name is taken too, in Unicode (bücher.example) or as its ASCII form (xn--bcher-kva.example), and stored in that ASCII ' +
        '(punycode) form; the pattern states the plain ASCII names only',
    }),
    rootRedirectUrl: FallbackUrl('Where / goes (301).'),
    notFoundUrl: FallbackUrl('Where an unknown slug goes (302).'),
    expiredUrl: FallbackUrl('Where an expired or used-up link goes (302).'),
  },
  { additionalProperties: false },
)

export const UpdateDomainBody = t.Object(
  {
    rootRedirectUrl: FallbackUrl('Where / goes (301).'),
    notFoundUrl: FallbackUrl('Where an unknown slug goes (302).'),
    expiredUrl: FallbackUrl('Where an expired or used-up link goes (302).'),
  },
  { additionalProperties: false },
)

export const DeleteDomainQuery = t.Object({
  archiveLinks: t.Optional(
    t.Union([t.Literal('true'), t.Literal('false')], {
      description: 'true: archive the links on the domain and delete it; otherwise a domain with links is refused (409 domain_has_links)',
    }),
  ),
})

export type CreateDomainInput = Static<typeof CreateDomainBody>
export type UpdateDomainInput = Static<typeof UpdateDomainBody>
export type DomainView = Static<typeof Domain>

export const DOMAIN_EVENTS: EventDefinition[] = [
  { type: 'domain.created', description: 'A custom domain was added; data.records names the DNS records to create.', data: Domain },
  {
    type: 'domain.verified',
    description: "A custom domain's TXT record was seen (it is verified), or a verified domain that was misconfigured points here again.",
    data: Domain,
  },
  {
    type: 'domain.misconfigured',
    description: "A verified domain's records stopped pointing here; it is still served until 7 days after misconfiguredAt.",
    data: Domain,
  },
  {
    type: 'domain.deleted',
    description: 'A custom domain was deleted and is no longer served; archivedLinks counts the links archived with it.',
    data: t.Composite([Domain, t.Object({ archivedLinks: t.Integer() })]),
  },
]
