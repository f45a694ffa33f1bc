import { block, section, type Template } from '../template'

const feature = (name: string) => [
  block('heading', { text: name, level: 3 }),
  block('text', { markdown: 'One or two sentences on what this feature does for people.' }),
]

export const appDownload: Template = {
  slug: 'app-download',
  name: 'App download',
  description: 'Send people to the right app store, with a short list of what your app does.',
  category: 'apps',
  tags: ['app', 'mobile', 'download', 'launch'],
  title: 'Your app name',
  theme: {
    light: { background: '#f5f8ff', text: '#0f172a', accent: '#1d4ed8', accentText: '#ffffff' },
    dark: { background: '#0b1020', text: '#e2e8f0', accent: '#93c5fd', accentText: '#0b1a33' },
    font: 'system',
    buttonShape: 'rounded',
  },
  sections: [
    section('full', [block('profile', { name: 'Your app name', bio: 'What your app helps people do, in one sentence.' })]),
    section(
      '1-1',
      [block('button', { label: 'Download on the App Store', url: 'https://example.com/ios' })],
      [block('button', { label: 'Get it on Google Play', url: 'https://example.com/android' })],
    ),
    section('1-1-1', feature('First feature'), feature('Second feature'), feature('Third feature')),
    section('full', [
      block('text', { markdown: 'Need help? Read the [help pages](https://example.com/help) or write to [support](mailto:support@example.com).' }),
    ]),
  ],
}
