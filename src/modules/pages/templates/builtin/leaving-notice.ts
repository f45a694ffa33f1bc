import { block, section, type Template } from '../template'

export const leavingNotice: Template = {
  slug: 'leaving-notice',
  name: 'Leaving notice',
  description: 'Tell visitors they are about to leave your site for another one, with a way to continue or go back.',
  category: 'announcements',
  tags: ['notice', 'external link', 'interstitial', 'disclaimer'],
  title: 'You are leaving our site',
  theme: {
    light: { background: '#ffffff', text: '#222222', accent: '#595959', accentText: '#ffffff' },
    dark: { background: '#1a1a1a', text: '#eeeeee', accent: '#cfcfcf', accentText: '#1a1a1a' },
    font: 'system',
    buttonShape: 'square',
  },
  sections: [
    section('full', [
      block('profile', { name: 'You are leaving our site', bio: 'The next page is on a site we do not run.' }),
      block('text', {
        markdown:
          'You are about to visit **example.com**. Its content, privacy practices and security are its own; check the address before you sign in or pay.',
      }),
    ]),
    section(
      '1-1',
      [block('button', { label: 'Continue to example.com', url: 'https://example.com' })],
      [block('button', { label: 'Go back', url: 'https://example.com/back', variant: 'outline' })],
    ),
  ],
}
