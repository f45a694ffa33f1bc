// The event catalogue (contract section 5): every type an endpoint can subscribe to, with the JSON Schema of
// its `data`. Areas add their events here as they land; publish() refuses a type that is not listed, and
// /webhooks/types and /zapier/samples are generated from these schemas.
import { t, type TSchema } from 'elysia'
import { Domain } from '../modules/domains/model'
import { Link } from '../modules/links/model'
import { BridgePage } from '../modules/pages/model'

export interface EventDefinition {
  type: string
  description: string
  data: TSchema
}

const LinkData = t.Omit(Link, ['qr'])
/** A page as its events carry it: without the view and click counters, which change without events. */
const PageData = t.Omit(BridgePage, ['views', 'buttonClicks'])
const LinkRef = t.Object({ id: t.String(), slug: t.String(), domain: t.String(), shortUrl: t.String(), destinationUrl: t.String() })

export const EVENT_CATALOGUE: EventDefinition[] = [
  { type: 'link.created', description: 'A link was created (also in bulk).', data: LinkData },
  {
    type: 'link.updated',
    description: 'A link was changed; `changes` names the fields that were sent.',
    data: t.Composite([LinkData, t.Object({ changes: t.Array(t.String()) })]),
  },
  { type: 'link.deleted', description: 'A link and its redirect were removed.', data: LinkRef },
  {
    type: 'link.clicked',
    description: 'A redirect was counted (bots, HEAD requests and test links are never counted).',
    data: t.Object({
      click: t.Object({
        id: t.String({ description: 'clk_…; also handed to the destination as lnk_cid when conversionTracking is on' }),
        timestamp: t.String({ format: 'date-time' }),
        unique: t.Boolean({ description: 'First click of this visitor on this link' }),
        referrer: t.Union([t.String(), t.Null()]),
        userAgent: t.Union([t.String(), t.Null()]),
      }),
      link: LinkRef,
    }),
  },
  {
    type: 'conversion.created',
    description: 'A conversion beacon (POST /conversions) was recorded for a click of a link with conversionTracking; a resent beacon counted once sends no second event.',
    data: t.Object({
      conversion: t.Object({
        id: t.String({ description: 'cnv_…' }),
        clickId: t.String({ description: 'The click (clk_…) whose lnk_cid the beacon carried' }),
        eventName: t.String({ minLength: 1, maxLength: 64 }),
        value: t.Union([t.Number({ minimum: 0 }), t.Null()], { description: 'In the major unit of currency (19.99), or null' }),
        currency: t.Union([t.String({ pattern: '^[A-Z]{3}$' }), t.Null()], { description: 'ISO 4217 code; set exactly when value is' }),
        metadata: t.Union([t.Record(t.String(), t.Unknown()), t.Null()], { description: 'The object the beacon sent, or null' }),
        timestamp: t.String({ format: 'date-time', description: 'When it was recorded' }),
      }),
      link: LinkRef,
      workspaceId: t.String({ description: 'The workspace of the link' }),
    }),
  },
  { type: 'domain.created', description: 'A custom domain was added; data.records names the DNS records to create.', data: Domain },
  {
    type: 'domain.verified',
    description: 'A custom domain\'s TXT record was seen (it is verified), or a verified domain that was misconfigured points here again.',
    data: Domain,
  },
  {
    type: 'domain.misconfigured',
    description: 'A verified domain\'s records stopped pointing here; it is still served until 7 days after misconfiguredAt.',
    data: Domain,
  },
  {
    type: 'domain.deleted',
    description: 'A custom domain was deleted and is no longer served; archivedLinks counts the links archived with it.',
    data: t.Composite([Domain, t.Object({ archivedLinks: t.Integer() })]),
  },
  { type: 'bridge_page.created', description: 'A bridge page was created (empty, or from a template).', data: PageData },
  {
    type: 'bridge_page.updated',
    description: 'A bridge page or its blocks changed; `changes` names the page fields sent, or `blocks` when a block was appended, changed or deleted. version is the page\'s new version.',
    data: t.Composite([PageData, t.Object({ changes: t.Array(t.String()) })]),
  },
  {
    type: 'bridge_page.deleted',
    description: 'A bridge page was deleted with its blocks; its URL no longer answers.',
    data: t.Object({ id: t.String(), slug: t.String(), domain: t.String(), url: t.String(), title: t.String() }),
  },
  {
    type: 'webhook.test',
    description: 'A test ping sent on request to check an endpoint.',
    data: t.Object({ endpointId: t.String(), message: t.String() }),
  },
]

export const EVENT_TYPES = new Set(EVENT_CATALOGUE.map((e) => e.type))
