// Profile: who the page is about. The first profile block of a page carries its one <h1> (the renderer
// decides which, through ctx.primaryHeading); any other renders its name as an <h2>.
// Classes: b-profile, b-profile-avatar, b-profile-name, b-profile-bio.
import { t, type Static } from 'elysia'
import { esc, fieldsSchema, imageUrlIssue, safeHttpsUrl, text } from './fields'
import type { BlockType } from './types'

const schema = fieldsSchema(
  'profile',
  {
    name: t.String({ minLength: 1, maxLength: 80, description: "The name shown as the page's main heading" }),
    bio: t.String({ maxLength: 300, description: 'A sentence or two under the name; empty for none' }),
    avatarUrl: t.String({ maxLength: 2048, description: 'An https URL of a square picture; empty for none' }),
    avatarAlt: t.String({
      maxLength: 200,
      description: 'What the picture shows, for people who cannot see it; empty when it only repeats the name (a portrait next to it)',
    }),
  },
  'A name with an optional picture and short bio',
)
export type ProfileFields = Static<typeof schema>

export const profile: BlockType<ProfileFields> = {
  type: 'profile',
  title: 'Profile',
  description: "A name with an optional round picture and a short bio; the first one is the page's main heading.",
  schema,
  defaults: { name: 'Your name', bio: 'A sentence about who you are and what you do.', avatarUrl: '', avatarAlt: '' },
  check: (f) => (f.avatarUrl ? imageUrlIssue('avatarUrl', f.avatarUrl) : []),
  render(f, ctx) {
    const src = safeHttpsUrl(f.avatarUrl)
    const tag = ctx.primaryHeading ? 'h1' : 'h2'
    const avatar = src ? `<img class="b-profile-avatar" src="${esc(src)}" alt="${esc(text(f.avatarAlt))}" width="96" height="96" loading="lazy">` : ''
    const bio = text(f.bio) ? `<p class="b-profile-bio">${esc(text(f.bio))}</p>` : ''
    return `<div class="b-profile">${avatar}<${tag} class="b-profile-name">${esc(text(f.name))}</${tag}>${bio}</div>`
  },
}
