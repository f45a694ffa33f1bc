import { block, section, type Template } from '../template'

const product = (n: string) => [
  block('heading', { text: `Product ${n}`, level: 3 }),
  block('text', { markdown: 'What it is, what it is made of, and its **price**.' }),
  block('button', { label: `Buy product ${n}`, url: `https://example.com/shop/product-${n}` }),
]

export const creatorShop: Template = {
  slug: 'creator-shop',
  name: 'Creator shop',
  description: 'Show a few products side by side with a buy button each, plus shipping details.',
  category: 'commerce',
  tags: ['shop', 'products', 'creator', 'sales'],
  title: 'Your shop',
  theme: {
    light: { background: '#fff8f3', text: '#2d1b12', accent: '#b3401b', accentText: '#ffffff' },
    dark: { background: '#1c1410', text: '#f5e9e1', accent: '#ffb38a', accentText: '#2d1207' },
    font: 'system',
    buttonShape: 'rounded',
  },
  sections: [
    section('full', [block('profile', { name: 'Your shop name', bio: 'Handmade goods, made in small batches.' })]),
    section('1-1-1', product('one'), product('two'), product('three')),
    section('full', [
      block('heading', { text: 'Shipping and returns' }),
      block('text', { markdown: 'Orders ship within a few days.\nReturns are accepted for 30 days. See the [shop policies](https://example.com/policies).' }),
      block('button', { label: 'See every product', url: 'https://example.com/shop', variant: 'outline' }),
    ]),
    section('full', [
      block('social_links', {
        items: [
          { network: 'instagram', url: 'https://example.com/instagram', label: '' },
          { network: 'pinterest', url: 'https://example.com/pinterest', label: '' },
        ],
      }),
    ]),
  ],
}
