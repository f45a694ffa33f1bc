// Apps whose links open in the app when it is installed. The page tries the app, then falls back to the
// web destination. docs/links.md lists this table for users.
export interface DeepLinkApp {
  name: string
  hosts: string[]
  /** Android package: the intent:// URL carries the web fallback itself. */
  androidPackage: string
  /** iOS URL scheme that opens the same path in the app. */
  iosUrl: (url: URL) => string
}

const samePath = (scheme: string) => (url: URL) => `${scheme}://${url.host}${url.pathname}${url.search}`

export const DEEP_LINK_APPS: DeepLinkApp[] = [
  {
    name: 'YouTube',
    hosts: ['youtube.com', 'www.youtube.com', 'm.youtube.com', 'youtu.be'],
    androidPackage: 'com.google.android.youtube',
    iosUrl: samePath('youtube'),
  },
  {
    name: 'Instagram',
    hosts: ['instagram.com', 'www.instagram.com'],
    androidPackage: 'com.instagram.android',
    iosUrl: (u) => `instagram://${u.pathname.startsWith('/p/') ? `media?id=${u.pathname.split('/')[2]}` : `user?username=${u.pathname.split('/')[1] ?? ''}`}`,
  },
  {
    name: 'Spotify',
    hosts: ['open.spotify.com'],
    androidPackage: 'com.spotify.music',
    iosUrl: (u) => `spotify:${u.pathname.split('/').filter(Boolean).join(':')}`,
  },
  { name: 'X', hosts: ['x.com', 'twitter.com', 'www.twitter.com', 'mobile.twitter.com'], androidPackage: 'com.twitter.android', iosUrl: samePath('twitter') },
  { name: 'TikTok', hosts: ['tiktok.com', 'www.tiktok.com', 'vm.tiktok.com'], androidPackage: 'com.zhiliaoapp.musically', iosUrl: samePath('snssdk1233') },
  { name: 'LinkedIn', hosts: ['linkedin.com', 'www.linkedin.com'], androidPackage: 'com.linkedin.android', iosUrl: samePath('linkedin') },
  {
    name: 'Facebook',
    hosts: ['facebook.com', 'www.facebook.com', 'm.facebook.com', 'fb.com'],
    androidPackage: 'com.facebook.katana',
    iosUrl: (u) => `fb://facewebmodal/f?href=${encodeURIComponent(u.href)}`,
  },
  {
    name: 'WhatsApp',
    hosts: ['wa.me', 'api.whatsapp.com'],
    androidPackage: 'com.whatsapp',
    iosUrl: (u) =>
      `whatsapp://send?phone=${u.pathname.replace(/\D/g, '')}${u.searchParams.get('text') ? `&text=${encodeURIComponent(u.searchParams.get('text')!)}` : ''}`,
  },
  {
    name: 'Telegram',
    hosts: ['t.me', 'telegram.me'],
    androidPackage: 'org.telegram.messenger',
    iosUrl: (u) => `tg://resolve?domain=${u.pathname.split('/')[1] ?? ''}`,
  },
  { name: 'Reddit', hosts: ['reddit.com', 'www.reddit.com'], androidPackage: 'com.reddit.frontpage', iosUrl: samePath('reddit') },
  {
    name: 'Amazon',
    hosts: ['amazon.com', 'www.amazon.com'],
    androidPackage: 'com.amazon.mShop.android.shopping',
    iosUrl: (u) => `com.amazon.mobile.shopping.web://${u.host}${u.pathname}${u.search}`,
  },
]

export function findApp(destination: URL): DeepLinkApp | undefined {
  const host = destination.hostname.toLowerCase()
  return DEEP_LINK_APPS.find((a) => a.hosts.includes(host))
}

/** The URL that opens the app on the platform, with the web destination as fallback on Android. */
export function appUrl(app: DeepLinkApp, destination: URL, platform: 'ios' | 'android'): string {
  if (platform === 'ios') return app.iosUrl(destination)
  const scheme = destination.protocol.replace(':', '')
  return `intent://${destination.host}${destination.pathname}${destination.search}#Intent;scheme=${scheme};package=${app.androidPackage};S.browser_fallback_url=${encodeURIComponent(destination.href)};end`
}
