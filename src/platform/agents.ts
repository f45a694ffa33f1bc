// What the user agent tells us: bots (never counted), social crawlers (get a preview page) and the mobile
// platform (for deep links).
import { isbot } from 'isbot'

// Link-preview fetchers of social networks and messengers. iMessage presents itself as
// "facebookexternalhit/1.1 Facebot Twitterbot/1.0", which the first entries match.
const SOCIAL_CRAWLER = new RegExp(
  [
    'facebookexternalhit|facebot|twitterbot|linkedinbot|slackbot|slack-imgproxy|discordbot|whatsapp|telegrambot|skypeuripreview',
    'pinterest(bot)?/|redditbot|embedly|vkshare|viber|line/|kakaotalk-scrap|snapchat|mastodon|bluesky|cardyb|iframely',
    'google-inspectiontool|yahoo!? ?slurp|applebot',
  ].join('|'),
  'i',
)

export const isSocialCrawler = (ua: string) => SOCIAL_CRAWLER.test(ua)

// isbot's pattern is long; the same few user agents come back again and again, so remember answers.
const botAnswers = new Map<string, boolean>()

export function isBot(ua: string): boolean {
  let answer = botAnswers.get(ua)
  if (answer === undefined) {
    answer = ua.trim() === '' || isbot(ua)
    if (botAnswers.size >= 10_000) botAnswers.clear()
    botAnswers.set(ua, answer)
  }
  return answer
}

export type MobilePlatform = 'ios' | 'android' | null

export function mobilePlatform(ua: string): MobilePlatform {
  if (/android/i.test(ua)) return 'android'
  if (/iphone|ipad|ipod/i.test(ua)) return 'ios'
  return null
}
