'use strict'
// The lnk events a Zap can start on: the catalogue of GET /v1/webhooks/types without `webhook.test`, which is
// an endpoint ping, not something that happens in a workspace. Kept here as data (the app never loads lnk's
// source); test/automations/zapier-app.test.ts fails when this list and the server's catalogue part ways.
// Each `sample` is what the Zap editor shows before the account has a real event: the server's own samples
// (GET /v1/zapier/samples) replace it as soon as a trigger is tested.

const LINK = {
  id: '0190e0e0-0000-7000-8000-000000000001',
  slug: 'launch',
  domain: 'lnk.example',
  shortUrl: 'https://lnk.example/launch',
  destinationUrl: 'https://example.com/launch',
}
const LINK_FULL = { ...LINK, title: 'Launch', tags: ['spring'], totalClicks: 0, uniqueClicks: 0, isActive: true, createdAt: '2026-01-01T12:00:00.000Z' }
const DOMAIN = {
  id: 'dom_0001',
  domain: 'go.example.com',
  unicodeDomain: 'go.example.com',
  verificationStatus: 'pending',
  dnsStatus: 'unknown',
  served: false,
  createdAt: '2026-01-01T12:00:00.000Z',
}
const TAG = { id: 'tag_0001', name: 'spring', color: '#22aa66', createdAt: '2026-01-01T12:00:00.000Z', updatedAt: '2026-01-01T12:00:00.000Z' }
const FOLDER = { id: 'fld_0001', name: 'Spring campaign', description: null, createdAt: '2026-01-01T12:00:00.000Z', updatedAt: '2026-01-01T12:00:00.000Z' }
const PAGE = { id: 'bp_0001', slug: 'spring', domain: 'lnk.example', title: 'Spring launch', url: 'https://lnk.example/p/spring', version: 1 }

const EVENTS = [
  { event: 'link.created', noun: 'Link', label: 'New Link', description: 'Triggers when a link is created (also in bulk).', data: LINK_FULL },
  { event: 'link.updated', noun: 'Link', label: 'Updated Link', description: 'Triggers when a link is changed.', data: { ...LINK_FULL, changes: ['title'] } },
  { event: 'link.deleted', noun: 'Link', label: 'Deleted Link', description: 'Triggers when a link and its redirect are removed.', data: LINK },
  {
    event: 'link.clicked',
    noun: 'Click',
    label: 'New Click',
    description: 'Triggers when a redirect is counted (bots and test links are never counted).',
    data: { click: { id: 'clk_0001', timestamp: '2026-01-01T12:00:00.000Z', unique: true, referrer: null, userAgent: 'Mozilla/5.0' }, link: LINK },
  },
  {
    event: 'tag.created',
    noun: 'Tag',
    label: 'New Tag',
    description: 'Triggers when a tag is created, or a link uses a tag name that was not a tag yet.',
    data: TAG,
  },
  {
    event: 'tag.updated',
    noun: 'Tag',
    label: 'Updated Tag',
    description: 'Triggers when a tag is renamed (on every link carrying it) or recoloured.',
    data: { ...TAG, name: 'summer', changes: ['name'], previousName: 'spring', linksChanged: 12 },
  },
  {
    event: 'tag.deleted',
    noun: 'Tag',
    label: 'Deleted Tag',
    description: 'Triggers when a tag is deleted and removed from every link.',
    data: { ...TAG, linksChanged: 12 },
  },
  { event: 'folder.created', noun: 'Folder', label: 'New Folder', description: 'Triggers when a folder is created.', data: FOLDER },
  {
    event: 'folder.updated',
    noun: 'Folder',
    label: 'Updated Folder',
    description: 'Triggers when a folder is renamed or its description changes.',
    data: { ...FOLDER, changes: ['name'] },
  },
  {
    event: 'folder.deleted',
    noun: 'Folder',
    label: 'Deleted Folder',
    description: 'Triggers when a folder is deleted; its links were moved or deleted with it.',
    data: { ...FOLDER, movedLinks: 0, deletedLinks: 0, moveTo: null },
  },
  {
    event: 'conversion.created',
    noun: 'Conversion',
    label: 'New Conversion',
    description: 'Triggers when a conversion is recorded for a click of a tracked link.',
    data: {
      conversion: {
        id: 'cnv_0001',
        clickId: 'clk_0001',
        eventName: 'purchase',
        value: 19.99,
        currency: 'EUR',
        metadata: null,
        timestamp: '2026-01-01T12:05:00.000Z',
      },
      link: LINK,
      workspaceId: 'ws_0001',
    },
  },
  { event: 'domain.created', noun: 'Domain', label: 'New Custom Domain', description: 'Triggers when a custom domain is added.', data: DOMAIN },
  {
    event: 'domain.verified',
    noun: 'Domain',
    label: 'Verified Custom Domain',
    description: "Triggers when a custom domain's DNS record is seen.",
    data: { ...DOMAIN, verificationStatus: 'verified', dnsStatus: 'ok', served: true },
  },
  {
    event: 'domain.misconfigured',
    noun: 'Domain',
    label: 'Misconfigured Custom Domain',
    description: "Triggers when a verified domain's records stop pointing at lnk.",
    data: { ...DOMAIN, verificationStatus: 'verified', dnsStatus: 'misconfigured', served: true },
  },
  {
    event: 'domain.deleted',
    noun: 'Domain',
    label: 'Deleted Custom Domain',
    description: 'Triggers when a custom domain is deleted.',
    data: { ...DOMAIN, archivedLinks: 0 },
  },
  { event: 'bridge_page.created', noun: 'Bridge Page', label: 'New Bridge Page', description: 'Triggers when a bridge page is created.', data: PAGE },
  {
    event: 'bridge_page.updated',
    noun: 'Bridge Page',
    label: 'Updated Bridge Page',
    description: 'Triggers when a bridge page or its blocks change.',
    data: { ...PAGE, changes: ['title'] },
  },
  {
    event: 'bridge_page.deleted',
    noun: 'Bridge Page',
    label: 'Deleted Bridge Page',
    description: 'Triggers when a bridge page is deleted.',
    data: { id: PAGE.id, slug: PAGE.slug, domain: PAGE.domain, url: PAGE.url, title: PAGE.title },
  },
]

/** Trigger keys may hold letters, digits and `_` only: `link.created` → `link_created`. */
const triggerKey = (event) => event.replace(/\./g, '_')

/** The envelope every delivery carries, with the id Zapier dedupes on. */
const sampleEnvelope = ({ event, data }) => ({
  id: `evt_sample_${triggerKey(event)}`,
  type: event,
  timestamp: '2026-01-01T12:00:00.000Z',
  mode: 'live',
  data,
})

module.exports = { EVENTS, triggerKey, sampleEnvelope }
