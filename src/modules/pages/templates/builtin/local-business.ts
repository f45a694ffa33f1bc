import { block, section, type Template } from '../template'

export const localBusiness: Template = {
  slug: 'local-business',
  name: 'Local business',
  description: 'Opening hours, address and phone number, with buttons to book and to see the menu or services.',
  category: 'business',
  tags: ['shop', 'restaurant', 'opening hours', 'location'],
  title: 'Your business name',
  theme: {
    light: { background: '#fbfaf6', text: '#23291f', accent: '#2f6b2f', accentText: '#ffffff' },
    dark: { background: '#121611', text: '#e4eadf', accent: '#9fd39a', accentText: '#0f2410' },
    font: 'system',
    buttonShape: 'rounded',
  },
  sections: [
    section('full', [block('profile', { name: 'Your business name', bio: 'What you offer, in one sentence.' })]),
    section(
      '1-1',
      [block('button', { label: 'Book a table', url: 'https://example.com/book' })],
      [block('button', { label: 'See the menu', url: 'https://example.com/menu', variant: 'outline' })],
    ),
    section(
      '1-1',
      [block('heading', { text: 'Opening hours' }), block('text', { markdown: '- Monday to Friday: 9:00–18:00\n- Saturday: 10:00–16:00\n- Sunday: closed' })],
      [
        block('heading', { text: 'Find us' }),
        block('contact', {
          name: 'Your business name',
          email: 'hello@example.com',
          phone: '+1 555 0100',
          website: '',
          address: '1 Example Street\nYour town',
        }),
      ],
    ),
  ],
}
