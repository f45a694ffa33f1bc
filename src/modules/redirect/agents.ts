// What the user agent tells us: bots (never counted), social crawlers (get a preview page) and the mobile
// platform (for deep links).
import { isbot } from 'isbot'

// Link-preview fetchers of social networks and messengers. iMessage presents itself as
// "facebookexternalhit/1.1 Facebot Twitterbot/1.0", which the first entries match.
const SOCIAL_CRAWLER = /facebookexternalhit|facebot|twitterbot|linkedinbot|slackbot|slack-imgproxy|discordbot|whatsapp|telegrambot|skypeuripreview|pinterest(bot)?\/|redditbot|embedly|vkshare|viber|line\/|kakaotalk-scrap|snapchat|mastodon|bluesky|cardyb|iframely|google-inspectiontool|yahoo!? ?slurp|applebot/i

export const isSocialCrawler = (ua: string) => SOCIAL_CRAWLER.test(ua)

export const isBot = (ua: string) => ua.trim() === '' || isbot(ua)

export type MobilePlatform = 'ios' | 'android' | null

export function mobilePlatform(ua: string): MobilePlatform {
  if (/android/i.test(ua)) return 'android'
  if (/iphone|ipad|ipod/i.test(ua)) return 'ios'
  return null
}
