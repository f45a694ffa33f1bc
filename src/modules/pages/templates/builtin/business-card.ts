import { block, section, type Template } from '../template'

export const businessCard: Template = {
  slug: 'business-card',
  name: 'Business card',
  description: 'Your contact details with a "Save contact" button, for the QR code on a printed card.',
  category: 'business',
  tags: ['contact', 'vcard', 'networking', 'professional'],
  title: 'Your name',
  theme: {
    light: { background: '#f7f7f5', text: '#1c1c1c', accent: '#1f3a5f', accentText: '#ffffff' },
    dark: { background: '#121417', text: '#e8e8e8', accent: '#9cc3f0', accentText: '#0e1a2b' },
    font: 'serif',
    buttonShape: 'square',
  },
  sections: [
    section('full', [block('profile', { name: 'Your name', bio: 'Your role at your organisation.' })]),
    section(
      '1-2',
      [block('heading', { text: 'About', level: 2 }), block('text', { markdown: 'Two or three sentences about your work and how you can help.' })],
      [
        block('contact', {
          name: 'Your name',
          title: 'Your role',
          organisation: 'Your organisation',
          email: 'you@example.com',
          phone: '+1 555 0100',
          website: 'https://example.com',
        }),
      ],
    ),
    section('full', [
      block('social_links', {
        items: [
          { network: 'linkedin', url: 'https://example.com/linkedin', label: '' },
          { network: 'website', url: 'https://example.com', label: '' },
        ],
      }),
    ]),
  ],
}
