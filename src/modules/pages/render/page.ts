// A bridge page as one self-contained HTML document: no script, no external CSS or fonts, every value
// escaped, the page's own stylesheet allowed by hash and nothing else. Blocks draw themselves (the
// catalogue's renderers); this file lays them out in sections and columns and writes the head.
import { escapeHtml } from '../../../platform/html'
import type { BlockType, RenderContext } from '../blocks/types'
import type { PageTree, TreeBlock } from '../tree'
import { pageStylesheet } from './styles'

export interface RenderOptions {
  /** The page's canonical public URL (og:url, rel=canonical). */
  url: string
  /** A test page: a visible banner and noindex. */
  isTest: boolean
  /** The short URL of a workspace link, or null when it is gone or inactive. */
  linkUrl(linkId: string): string | null
  blockType(type: string): BlockType | undefined
  /**
   * The one origin allowed to frame the page: the API's (LNK_BASE_URL), where the console's block editor
   * shows a live preview. Absent: no framing at all.
   */
  frameAncestor?: string
}

export interface RenderedPage {
  html: string
  headers: Record<string, string>
}

/** Where embeds may come from: the video block's players, nothing else. */
export const FRAME_SOURCES = ['https://www.youtube-nocookie.com', 'https://player.vimeo.com', 'https://open.spotify.com', 'https://w.soundcloud.com']

export const styleHash = (css: string) => `sha256-${new Bun.CryptoHasher('sha256').update(css).digest('base64')}`

/**
 * The page's Content-Security-Policy: only the stylesheet `css` (by hash, so no inline style attribute and
 * no injected <style> applies), images over https or inline, the allowed players in frames, and no script,
 * form, base URL or framing by others.
 *
 * Framing: the console (served on the API origin) previews the page in an iframe while its owner edits it,
 * so that one origin may frame it. Every other origin still may not, so a hostile site cannot overlay the
 * page's buttons for clickjacking; the console's own CSP forbids anyone framing the console in turn.
 */
export function pageCsp(css: string, frameAncestor?: string): string {
  return [
    "default-src 'none'",
    `style-src '${styleHash(css)}'`,
    'img-src https: data:',
    `frame-src ${FRAME_SOURCES.join(' ')}`,
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${frameAncestor ?? "'none'"}`,
  ].join('; ')
}

/** The response headers of a page whose stylesheet is `css` (caching and ETag are the server's). */
export function pageHeaders(css: string, isTest: boolean, frameAncestor?: string): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': pageCsp(css, frameAncestor),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'strict-origin-when-cross-origin',
    ...(isTest ? { 'x-robots-tag': 'noindex' } : {}),
  }
}

export const trackedHref = (blockId: string) => (index?: number) => `/_/b/${encodeURIComponent(blockId)}${index === undefined ? '' : `?i=${index}`}`

const isHttpUrl = (url: string | null | undefined): url is string => typeof url === 'string' && /^https?:\/\//i.test(url)

function renderBlock(block: TreeBlock, opts: RenderOptions, primaryHeading: boolean): string {
  const type = opts.blockType(block.type)
  if (!type) return ''
  const ctx: RenderContext = { blockId: block.id, trackedHref: trackedHref(block.id), linkUrl: (id) => opts.linkUrl(id), primaryHeading }
  try {
    return type.render(block.fields ?? {}, ctx)
  } catch {
    // One block whose stored fields its renderer cannot draw must not take the whole page down.
    return ''
  }
}

function renderBody(tree: PageTree, opts: RenderOptions): string {
  let headingGiven = false
  const sections = tree.sections.map((section) => {
    const columns = section.columns.map((column) => {
      const blocks = column.blocks.map((block) => {
        const primary = !headingGiven && block.type === 'profile' && opts.blockType(block.type) !== undefined
        const html = renderBlock(block, opts, primary)
        if (primary && html.includes('<h1')) headingGiven = true
        return html
      })
      return `<div class="c w-${Number(column.width) || 12}">${blocks.join('')}</div>`
    })
    return `<section class="s s-${escapeHtml(section.layout)}">${columns.join('')}</section>`
  })
  // Exactly one <h1>: the first profile block's name, or else the page title.
  const title = headingGiven ? '' : `<h1 class="page-title">${escapeHtml(tree.title)}</h1>`
  return `${title}${sections.join('')}`
}

function meta(tree: PageTree, opts: RenderOptions): string {
  const m = (attr: 'name' | 'property', key: string, value: string) => `<meta ${attr}="${key}" content="${escapeHtml(value)}">`
  const image = isHttpUrl(tree.ogImageUrl) ? tree.ogImageUrl : null
  const description = tree.description?.trim() ? tree.description : null
  return [
    description ? m('name', 'description', description) : '',
    opts.isTest ? '<meta name="robots" content="noindex,nofollow">' : '',
    isHttpUrl(opts.url) ? `<link rel="canonical" href="${escapeHtml(opts.url)}">` : '',
    m('property', 'og:type', 'website'),
    m('property', 'og:title', tree.title),
    description ? m('property', 'og:description', description) : '',
    isHttpUrl(opts.url) ? m('property', 'og:url', opts.url) : '',
    image ? m('property', 'og:image', image) : '',
    m('name', 'twitter:card', image ? 'summary_large_image' : 'summary'),
  ].join('')
}

/** The page as HTML with its headers. Unknown block types draw nothing; nothing here throws on stored data. */
export function renderPage(tree: PageTree, opts: RenderOptions): RenderedPage {
  const css = pageStylesheet(tree.theme)
  const body = renderBody(tree, opts)
  const banner = opts.isTest ? '<header class="test-banner"><p>Test page — not public</p></header>' : ''
  const html =
    `<!doctype html><html lang="${escapeHtml(tree.lang || 'en')}"><head><meta charset="utf-8"><meta name="viewport" ` +
    `content="width=device-width,initial-scale=1"><meta name="color-scheme" content="light ` +
    `dark"><title>${escapeHtml(tree.title)}</title>${meta(tree, opts)}<link rel="icon" href="data:,"><style>${css}</style></head><body><a ` +
    `class="skip" href="#main">Skip to content</a>${banner}<main id="main" tabindex="-1">${body}</main></body></html>`
  return { html, headers: pageHeaders(css, opts.isTest, opts.frameAncestor) }
}
