import { block, section, type Template } from '../template'

export const linkInBio: Template = {
  slug: 'link-in-bio',
  name: 'Link in bio',
  description: 'A profile with your most important links and social profiles, for the link in your bio.',
  category: 'personal',
  tags: ['social', 'profile', 'links', 'creator'],
  title: 'Your name',
  theme: {
    light: { background: '#ffffff', text: '#1f2328', accent: '#0b57d0', accentText: '#ffffff' },
    dark: { background: '#0d1117', text: '#e6edf3', accent: '#8ab4f8', accentText: '#0b1d3a' },
    font: 'system',
    buttonShape: 'pill',
  },
  sections: [
    section('full', [
      block('profile', { name: 'Your name', bio: 'One line about what you do and what people find here.' }),
      block('social_links', {
        items: [
          { network: 'instagram', url: 'https://example.com/your-instagram', label: '' },
          { network: 'youtube', url: 'https://example.com/your-channel', label: '' },
          { network: 'website', url: 'https://example.com', label: '' },
        ],
      }),
    ]),
    section('full', [
      block('button', { label: 'My latest project', url: 'https://example.com/latest' }),
      block('button', { label: 'Read my blog', url: 'https://example.com/blog' }),
    ]),
    section(
      '1-1',
      [block('button', { label: 'Newsletter', url: 'https://example.com/newsletter', variant: 'outline' })],
      [block('button', { label: 'Support my work', url: 'https://example.com/support', variant: 'outline' })],
    ),
    section('full', [block('divider'), block('text', { markdown: 'Questions or ideas? Write to [you@example.com](mailto:you@example.com).' })]),
  ],
}
