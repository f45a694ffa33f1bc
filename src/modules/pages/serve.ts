// What visitors meet: `{short or custom domain}/p/{slug}`, a link showing a page instead of redirecting,
// and `/_/b/{blockId}` (a raw-URL button: count, then send on). Rendered pages are kept in memory by id until
// the bus says the page changed (or any link did: a button's short URL may have); views and clicks are
// counted in memory and written every second, so a visit never waits for the database.
import { isBot } from '../../platform/agents'
import type { Clock } from '../../platform/clock'
import type { Config } from '../../platform/config'
import { escapeHtml, htmlPage } from '../../platform/html'
import { LruCache } from '../../platform/lru'
import type { Logger } from '../../platform/log'
import { DAY_MS } from '../../platform/time'
import { shortUrl } from '../links/slug'
import { blockType } from './blocks'
import { renderPage } from './render/page'
import type { PageRow, PagesRepo } from './repo'
import { pageUrl } from './service'

/** The host a visit came to, as the redirect path resolved it. */
export interface VisitTarget {
  /** The link domain the host stands for. */
  domain: string
  /** The workspace holding the custom domain, or null on the shared pool. */
  customWorkspaceId: string | null
}

interface Rendered {
  row: PageRow
  html: string
  headers: Record<string, string>
  etag: string
}

const PAGE_SLUG = /^\/p\/([a-z0-9-]{1,64})\/?$/
const BUTTON = /^\/_\/b\/(blk_[A-Za-z0-9]{1,40})$/
const CACHE_ENTRIES = 2_000
/** How often counted views and clicks are written. */
export const COUNT_FLUSH_MS = 1_000

export interface PageServerDeps {
  config: Config
  clock: Clock
  log: Logger
  pages: PagesRepo
}

export function createPageServer(deps: PageServerDeps) {
  const { clock, pages } = deps
  // The console on the API origin previews pages in a frame; no other origin may frame them.
  const frameAncestor = new URL(deps.config.baseUrl).origin
  const rendered = new LruCache<Rendered>(CACHE_ENTRIES)
  const bySlug = new LruCache<string | null>(CACHE_ENTRIES * 4)
  let counts = new Map<string, { pageId: string; blockId: string; day: number; count: number }>()

  function count(pageId: string, blockId: string) {
    const day = Math.floor(clock.now() / DAY_MS) * DAY_MS
    const key = `${pageId}|${blockId}|${day}`
    const entry = counts.get(key)
    if (entry) entry.count++
    else counts.set(key, { pageId, blockId, day, count: 1 })
  }

  /** A person's GET of a live page counts; bots, HEAD and test pages never do. */
  const counted = (request: Request, row: Pick<PageRow, 'isTest'>) => request.method === 'GET' && !row.isTest && !isBot(request.headers.get('user-agent') ?? '')

  function render(id: string): Rendered | null {
    const cached = rendered.get(id)
    if (cached) return cached
    const row = pages.findByIdSync(id)
    if (!row) return null
    const tree = pages.treeSync(id)
    const ids = tree.flatMap((s) => s.columns.flatMap((c) => c.blocks.flatMap((b) => blockType(b.type)?.linkIds?.(b.fields) ?? [])))
    const targets = new Map(pages.linkTargetsSync([...new Set(ids)]).map((l) => [l.id, l]))
    const page = renderPage(
      { title: row.title, description: row.description, lang: row.lang, theme: row.theme, ogImageUrl: row.ogImageUrl, sections: tree },
      {
        url: pageUrl(deps, row),
        isTest: row.isTest,
        blockType,
        frameAncestor,
        linkUrl(linkId) {
          const link = targets.get(linkId)
          return link && link.usable && link.workspaceId === row.workspaceId ? shortUrl(deps, link) : null
        },
      },
    )
    const etag = `"${row.version}-${new Bun.CryptoHasher('sha1').update(page.html).digest('base64url').slice(0, 16)}"`
    const entry = { row, html: page.html, headers: page.headers, etag }
    rendered.set(id, entry)
    return entry
  }

  function answer(entry: Rendered, request: Request, cache: string): Response {
    const headers = { ...entry.headers, etag: entry.etag, 'cache-control': entry.row.isTest ? 'no-store' : cache }
    if (request.headers.get('if-none-match') === entry.etag) return new Response(null, { status: 304, headers })
    return new Response(request.method === 'HEAD' ? null : entry.html, { status: 200, headers })
  }

  const notHere = (row: PageRow, target: VisitTarget) => target.customWorkspaceId !== null && target.customWorkspaceId !== row.workspaceId

  return {
    /** `/p/{slug}` or `/_/b/{blockId}` on a short host; null for any other path. */
    handle(request: Request, path: string, search: string, target: VisitTarget): Response | null {
      const page = PAGE_SLUG.exec(path)
      if (page) return this.page(request, page[1]!, target)
      const button = BUTTON.exec(path)
      if (button) return this.button(request, button[1]!, new URLSearchParams(search).get('i'), target)
      return null
    },

    page(request: Request, slug: string, target: VisitTarget): Response | null {
      const key = `${target.domain}|${slug}`
      let id = bySlug.get(key)
      if (id === undefined) {
        id = pages.findBySlugSync(target.domain, slug)?.id ?? null
        bySlug.set(key, id)
      }
      const entry = id === null ? null : render(id)
      if (entry === null || notHere(entry.row, target)) return null
      if (counted(request, entry.row)) count(entry.row.id, '')
      // Short: a changed page shows within a minute, and revalidation is cheap (ETag).
      return answer(entry, request, 'public, max-age=60')
    },

    /** A link with bridgePageId shows its page; null when the page is gone (the redirect goes ahead). */
    show(request: Request, pageId: string): Response | null {
      const entry = render(pageId)
      if (entry === null) return null
      if (counted(request, entry.row)) count(entry.row.id, '')
      // The link's URL is counted per visit: never cached by others.
      return answer(entry, request, 'private, no-store')
    },

    button(request: Request, blockId: string, index: string | null, target: VisitTarget): Response | null {
      const owner = pages.blockOwnerSync(blockId)
      if (!owner || (target.customWorkspaceId !== null && target.customWorkspaceId !== owner.workspaceId)) return null
      const i = index === null ? 0 : /^\d{1,3}$/.test(index) ? Number(index) : -1
      const url = i < 0 ? null : (blockType(owner.type)?.outboundUrl?.(owner.fields, i) ?? null)
      if (url === null) return null
      if (owner.isTest) {
        return htmlPage({
          title: 'Test page',
          body: `<h1>Test page</h1><p>This button of a test page would lead to:</p><p class="dest">${escapeHtml(url)}</p><p class="muted">Test pages never send visitors on and count nothing.</p>`,
          headers: { 'x-robots-tag': 'noindex' },
        })
      }
      if (counted(request, owner)) count(owner.pageId, blockId)
      return new Response(null, { status: 302, headers: { location: url, 'cache-control': 'private, no-store', 'referrer-policy': 'strict-origin-when-cross-origin', 'x-robots-tag': 'noindex' } })
    },

    /** A page changed or was deleted. Slugs are dropped wholesale: a rename frees one and takes another. */
    invalidate(id: string) {
      rendered.delete(id)
      bySlug.clear()
    },

    /** A link changed: any page's button may show its short URL. */
    invalidateAll() {
      rendered.clear()
    },

    /** Writes the counted views and clicks. */
    async flush() {
      if (!counts.size) return
      const batch = [...counts.values()]
      counts = new Map()
      try {
        await pages.addCounts(batch)
      } catch (err) {
        // Put them back: they are written with the next flush.
        for (const r of batch) {
          const key = `${r.pageId}|${r.blockId}|${r.day}`
          const entry = counts.get(key)
          if (entry) entry.count += r.count
          else counts.set(key, r)
        }
        deps.log.error('writing page views and clicks failed; kept for the next try', { error: (err as Error).message })
      }
    },
  }
}

export type PageServer = ReturnType<typeof createPageServer>
