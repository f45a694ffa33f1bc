import { block, section, type Template } from '../template'

export const event: Template = {
  slug: 'event',
  name: 'Event',
  description: 'Date, place and programme of an event, with a button to get tickets or register.',
  category: 'events',
  tags: ['event', 'tickets', 'conference', 'concert'],
  title: 'Event name',
  theme: {
    light: { background: '#ffffff', text: '#1b1530', accent: '#6d28d9', accentText: '#ffffff' },
    dark: { background: '#120e1f', text: '#ece8f7', accent: '#c4b5fd', accentText: '#1e1240' },
    font: 'system',
    buttonShape: 'pill',
  },
  sections: [
    section('full', [block('profile', { name: 'Event name', bio: 'Day, date and time · Venue, town' })]),
    section(
      '2-1',
      [
        block('heading', { text: 'About the event' }),
        block('text', { markdown: 'What happens, who it is for and why it is worth coming.\n\nDoors open half an hour before the start.' }),
      ],
      [
        block('button', { label: 'Get tickets', url: 'https://example.com/tickets' }),
        block('button', { label: 'How to get there', url: 'https://example.com/directions', variant: 'outline' }),
      ],
    ),
    section('full', [
      block('heading', { text: 'Programme' }),
      block('text', { markdown: '- 18:00 — Doors open\n- 18:30 — First part\n- 20:00 — Second part\n- 21:30 — Close' }),
    ]),
    section('full', [block('divider'), block('text', { markdown: 'Questions? Write to [the organisers](mailto:events@example.com).' })]),
  ],
}
