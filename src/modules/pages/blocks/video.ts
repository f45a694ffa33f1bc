// Video: an embedded player from YouTube (through youtube-nocookie.com), Vimeo, Spotify or SoundCloud,
// built from the address the author pastes. Only these four hosts are framed (the page's CSP frame-src
// names them). The frame is sandboxed to what the players need, and a plain link to the original page
// follows it for readers without frames. An empty url renders nothing.
// Classes: b-video, b-video-<service> (youtube, vimeo, spotify, soundcloud), b-video-wide (16:9 players),
// b-video-audio (fixed-height players), b-video-frame, b-video-fallback, b-video-link.
import { t, type Static } from 'elysia'
import { esc, fieldsSchema, safeUrl, text } from './fields'
import type { BlockType } from './types'

export type VideoService = 'youtube' | 'vimeo' | 'spotify' | 'soundcloud'

export interface ParsedVideo {
  service: VideoService
  /** The player's address (https, on the service's embed host). */
  embedUrl: string
  /** The original page, rebuilt from the parsed parts. */
  pageUrl: string
  /** Audio players have a fixed height; video players keep 16:9. */
  audio: boolean
  height: number
}

export const SERVICE_NAMES: Record<VideoService, string> = { youtube: 'YouTube', vimeo: 'Vimeo', spotify: 'Spotify', soundcloud: 'SoundCloud' }

const YOUTUBE_ID = /^[A-Za-z0-9_-]{11}$/
const YOUTUBE_PATH = /^\/(?:shorts|embed|live)\/([A-Za-z0-9_-]{11})\/?$/
const VIMEO_PATH = /^\/(?:channels\/[\w-]+\/)?(\d{1,12})(?:\/([0-9a-f]{6,20}))?\/?$/
const VIMEO_PLAYER_PATH = /^\/video\/(\d{1,12})\/?$/
const SPOTIFY_PATH = /^\/(?:intl-[a-z]{2}(?:-[a-z]{2})?\/)?(track|album|playlist|episode|show)\/([A-Za-z0-9]{22})\/?$/
const SOUNDCLOUD_PATH = /^\/([A-Za-z0-9_-]{1,100})\/(sets\/)?([A-Za-z0-9_-]{1,200})\/?$/

/** A YouTube start time (`90`, `90s`, `1m30s`, `1h2m3s`) in seconds, or null. */
function startSeconds(value: string | null): number | null {
  const m = value ? /^(?:(\d{1,2})h)?(?:(\d{1,4})m)?(?:(\d{1,6})s?)?$/.exec(value) : null
  if (!m || !(m[1] || m[2] || m[3])) return null
  return Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0)
}

function youtube(id: string, start: number | null): ParsedVideo {
  return {
    service: 'youtube',
    embedUrl: `https://www.youtube-nocookie.com/embed/${id}${start ? `?start=${start}` : ''}`,
    pageUrl: `https://www.youtube.com/watch?v=${id}${start ? `&t=${start}s` : ''}`,
    audio: false,
    height: 315,
  }
}

function vimeo(id: string, hash: string | null): ParsedVideo {
  return {
    service: 'vimeo',
    embedUrl: `https://player.vimeo.com/video/${id}${hash ? `?h=${hash}` : ''}`,
    pageUrl: `https://vimeo.com/${id}${hash ? `/${hash}` : ''}`,
    audio: false,
    height: 315,
  }
}

/** The player for a pasted address, or null when it is not one of the supported services' pages. */
export function parseVideoUrl(raw: string): ParsedVideo | null {
  if (!safeUrl(raw)) return null
  const url = new URL(raw)
  const host = url.hostname.toLowerCase().replace(/^(?:www|m)\./, '')
  const path = url.pathname
  if (host === 'youtube.com' || host === 'music.youtube.com') {
    const id = path === '/watch' ? url.searchParams.get('v') : YOUTUBE_PATH.exec(path)?.[1]
    return id && YOUTUBE_ID.test(id) ? youtube(id, startSeconds(url.searchParams.get('t') ?? url.searchParams.get('start'))) : null
  }
  if (host === 'youtu.be') {
    const id = path.slice(1).replace(/\/$/, '')
    return YOUTUBE_ID.test(id) ? youtube(id, startSeconds(url.searchParams.get('t'))) : null
  }
  if (host === 'vimeo.com') {
    const m = VIMEO_PATH.exec(path)
    return m ? vimeo(m[1]!, m[2] ?? null) : null
  }
  if (host === 'player.vimeo.com') {
    const m = VIMEO_PLAYER_PATH.exec(path)
    const hash = url.searchParams.get('h')
    return m ? vimeo(m[1]!, hash && /^[0-9a-f]{6,20}$/.test(hash) ? hash : null) : null
  }
  if (host === 'open.spotify.com') {
    const m = SPOTIFY_PATH.exec(path)
    if (!m) return null
    const [, kind, id] = m
    const compact = kind === 'track' || kind === 'episode'
    return {
      service: 'spotify',
      embedUrl: `https://open.spotify.com/embed/${kind}/${id}`,
      pageUrl: `https://open.spotify.com/${kind}/${id}`,
      audio: true,
      height: compact ? 152 : 352,
    }
  }
  if (host === 'soundcloud.com') {
    const m = SOUNDCLOUD_PATH.exec(path)
    if (!m) return null
    const pageUrl = `https://soundcloud.com/${m[1]}/${m[2] ?? ''}${m[3]}`
    return {
      service: 'soundcloud',
      embedUrl: `https://w.soundcloud.com/player/?url=${encodeURIComponent(pageUrl)}`,
      pageUrl,
      audio: true,
      height: m[2] ? 450 : 166,
    }
  }
  return null
}

const SUPPORTED =
  'Paste the address of a YouTube (youtube.com/watch?v=…, youtu.be/…, youtube.com/shorts/…), Vimeo (vimeo.com/…), Spotify ' +
  '(open.spotify.com/track|album|playlist|episode|show/…) or SoundCloud (soundcloud.com/artist/track) page; other sites cannot be embedded'

const schema = fieldsSchema(
  'video',
  {
    url: t.String({ maxLength: 2048, description: `The address of the video or audio page. ${SUPPORTED}. Empty: nothing is shown yet` }),
    title: t.String({ minLength: 1, maxLength: 200, description: 'What the player holds, e.g. "Music video: Song title"; read out by screen readers' }),
  },
  'An embedded YouTube, Vimeo, Spotify or SoundCloud player',
)
export type VideoFields = Static<typeof schema>

/** What the players need to run (their own scripts on their own origin), open their site, and go full screen. */
const SANDBOX = 'allow-scripts allow-same-origin allow-presentation allow-popups'

export const video: BlockType<VideoFields> = {
  type: 'video',
  title: 'Video or audio',
  description: "An embedded YouTube (privacy-enhanced), Vimeo, Spotify or SoundCloud player, from the page's address.",
  schema,
  defaults: { url: '', title: 'Video' },
  check: (f) => (f.url && !parseVideoUrl(f.url) ? [{ path: 'url', message: SUPPORTED }] : []),
  render(f) {
    const player = typeof f.url === 'string' ? parseVideoUrl(f.url) : null
    if (!player) return ''
    const title = text(f.title) || 'Player'
    const service = SERVICE_NAMES[player.service]
    const shape = player.audio ? 'b-video-audio' : 'b-video-wide'
    return (
      `<div class="b-video b-video-${player.service} ${shape}">` +
      `<iframe class="b-video-frame" src="${esc(player.embedUrl)}" title="${esc(title)}" width="560" height="${player.height}" loading="lazy" ` +
      `sandbox="${SANDBOX}" referrerpolicy="strict-origin-when-cross-origin" allow="encrypted-media; fullscreen; picture-in-picture" ` +
      `allowfullscreen></iframe>` +
      `<p class="b-video-fallback"><a class="b-video-link" href="${esc(player.pageUrl)}">${esc(`Open on ${service}: ${title}`)}</a></p>` +
      `</div>`
    )
  },
}
