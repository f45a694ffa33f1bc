import { block, section, type Template } from '../template'

export const musicianRelease: Template = {
  slug: 'musician-release',
  name: 'Music release',
  description: 'Announce a single or an album: a player, links to every streaming service and your tour dates.',
  category: 'music',
  tags: ['music', 'release', 'streaming', 'tour'],
  title: 'New release by Artist name',
  theme: {
    light: { background: '#fdf6ec', text: '#2b1d0e', accent: '#7a1fa2', accentText: '#ffffff' },
    dark: { background: '#14101c', text: '#f1ecf7', accent: '#c9a7ff', accentText: '#1a0f2e' },
    font: 'serif',
    buttonShape: 'rounded',
  },
  sections: [
    section('full', [block('profile', { name: 'Artist name', bio: 'The new single "Song title" is out now.' })]),
    section(
      '2-1',
      [
        block('heading', { text: 'Listen now' }),
        block('text', { markdown: 'A few words about the release: how it was made, who played on it, what it means to you.' }),
        // Empty until the artist pastes the release's Spotify, SoundCloud, YouTube or Vimeo address.
        block('video', { url: '', title: 'Player: Song title' }),
      ],
      [
        block('heading', { text: 'Stream or buy', level: 3 }),
        block('button', { label: 'Spotify', url: 'https://example.com/spotify' }),
        block('button', { label: 'Apple Music', url: 'https://example.com/apple-music' }),
        block('button', { label: 'Bandcamp', url: 'https://example.com/bandcamp', variant: 'outline' }),
      ],
    ),
    section('full', [
      block('heading', { text: 'Tour dates' }),
      block('text', { markdown: '- Date — City — Venue\n- Date — City — Venue\n- Date — City — Venue' }),
      block('button', { label: 'Tickets', url: 'https://example.com/tickets', variant: 'outline' }),
    ]),
    section('full', [
      block('social_links', {
        items: [
          { network: 'instagram', url: 'https://example.com/instagram', label: '' },
          { network: 'youtube', url: 'https://example.com/youtube', label: '' },
          { network: 'bandcamp', url: 'https://example.com/bandcamp', label: '' },
        ],
      }),
    ]),
  ],
}
