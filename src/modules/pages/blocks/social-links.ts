// Social links: a row of labelled links to the author's profiles elsewhere. Each goes through the page's
// tracked redirect (/_/b/{blockId}?i=<index>), so clicks are counted per item.
// Classes: b-social, b-social-item, b-social-link, and b-social-<network> on each link (e.g. b-social-github).
import { t, type Static } from 'elysia'
import { esc, fieldsSchema, safeUrl, text, UrlString, urlIssue } from './fields'
import type { BlockType } from './types'

/** Networks and the label a link shows when the item has none of its own. */
export const SOCIAL_NETWORKS = {
  website: 'Website',
  instagram: 'Instagram',
  tiktok: 'TikTok',
  youtube: 'YouTube',
  x: 'X',
  facebook: 'Facebook',
  linkedin: 'LinkedIn',
  github: 'GitHub',
  mastodon: 'Mastodon',
  bluesky: 'Bluesky',
  threads: 'Threads',
  twitch: 'Twitch',
  spotify: 'Spotify',
  soundcloud: 'SoundCloud',
  bandcamp: 'Bandcamp',
  pinterest: 'Pinterest',
  other: 'Link',
} as const
type Network = keyof typeof SOCIAL_NETWORKS
const NETWORKS = Object.keys(SOCIAL_NETWORKS) as Network[]

const Item = t.Object(
  {
    network: t.Union(
      NETWORKS.map((n) => t.Literal(n)),
      { description: `One of ${NETWORKS.join(', ')}` },
    ),
    url: UrlString("The profile's address (http or https)"),
    label: t.Optional(t.String({ maxLength: 40, description: "The text of the link; empty or left out for the network's name" })),
  },
  { additionalProperties: false, description: 'One profile' },
)

const schema = fieldsSchema(
  'social_links',
  { items: t.Array(Item, { minItems: 1, maxItems: 20, description: 'The profiles, in the order shown' }) },
  'Links to profiles on other sites',
)
export type SocialLinksFields = Static<typeof schema>

export const socialLinks: BlockType<SocialLinksFields> = {
  type: 'social_links',
  title: 'Social links',
  description: 'Labelled links to profiles on other sites (clicks are counted per link).',
  schema,
  defaults: { items: [{ network: 'website', url: 'https://example.com', label: '' }] },
  check: (f) => f.items.flatMap((item, i) => urlIssue(`items/${i}/url`, item.url)),
  render(f, ctx) {
    const items = (Array.isArray(f.items) ? f.items : []).map((item, i) => {
      const network: Network = Object.hasOwn(SOCIAL_NETWORKS, item?.network) ? item.network : 'other'
      const label = text(item?.label) || SOCIAL_NETWORKS[network]
      return `<li class="b-social-item"><a class="b-social-link b-social-${network}" href="${esc(ctx.trackedHref(i))}">${esc(label)}</a></li>`
    })
    return items.length ? `<ul class="b-social">${items.join('')}</ul>` : ''
  },
  outboundUrl: (f, index) => safeUrl(f.items?.[index]?.url),
}
