// What visitors meet: `{short or custom domain}/p/{slug}`, a link showing a page instead of redirecting,
// and `/_/b/{blockId}` (a raw-URL button: count, then send on). Rendered pages are kept in memory by id until
// the bus says the page changed (or any link did: a button's short URL may have); views and clicks are
// counted in memory and written every second, so a visit never waits for the database. On SQLite a cache
// miss reads synchronously and nothing awaits; on PostgreSQL a miss awaits the pool, other nodes' changes
// arrive as bus notices, and entries also expire after SHARED_CACHE_TTL_MS.
import { isBot } from '../../platform/agents'
import type { Clock } from '../../platform/clock'
import type { Config } from '../../platform/config'
import { escapeHtml, htmlPage } from '../../platform/html'
import { LruCache } from '../../platform/lru'
import type { Logger } from '../../platform/log'
import { DAY_MS } from '../../platform/time'
import { shortUrl } from '../links/model'
import { blockType } from './blocks'
import { renderPage } from './render/page'
import type { BlockOwner, LinkTarget, PageRow, PagesRepo, PagesSyncReads } from './port'
import type { TreeSection } from './tree'
import { pageUrl } from './service'

/** The host a visit came to, as the redirect path resolved it. */
export interface VisitTarget {
  /** The link domain the host stands for. */
  domain: string
  /** The workspace holding the custom domain, or null on the shared pool. */
  customWorkspaceId: string | null
}

/** A visitor answer: at once on SQLite, a Promise on PostgreSQL when the cache misses. */
export type VisitAnswer = Response | null | Promise<Response | null>

interface Rendered {
  row: PageRow
  html: string
  headers: Record<string, string>
  etag: string
  at: number
}

const PAGE_SLUG = /^\/p\/([a-z0-9-]{1,64})\/?$/
const BUTTON = /^\/_\/b\/(blk_[A-Za-z0-9]{1,40})$/
const CACHE_ENTRIES = 2_000
/** How often counted views and clicks are written. */
export const COUNT_FLUSH_MS = 1_000
/**
 * How long a cached page or slug is trusted on PostgreSQL without a notice. Other nodes' changes arrive as
 * bus notices within milliseconds; this only bounds what a notice lost while a node died or its LISTEN
 * connection was down (before the reset) can leave stale, and keeps the database off the hot path.
 */
export const SHARED_CACHE_TTL_MS = 5_000

export interface PageServerDeps {
  config: Config
  clock: Clock
  log: Logger
  pages: PagesRepo
  /** SQLite only: the serving path's reads without awaiting (PostgreSQL's are awaited on `pages`). */
  syncReads?: PagesSyncReads
  /** How long a cached entry is trusted; Infinity where every change is heard (one SQLite process). */
  ttlMs: number
}

/** `f(value)` at once for a value, after it settles for a Promise: SQLite's reads never cost a visit a tick. */
function andThen<T, U>(value: T | Promise<T>, f: (v: T) => U | Promise<U>): U | Promise<U> {
  return value instanceof Promise ? value.then(f) : f(value)
}

export function createPageServer(deps: PageServerDeps) {
  const { clock, pages, syncReads, ttlMs } = deps
  // The console on the API origin previews pages in a frame; no other origin may frame them.
  const frameAncestor = new URL(deps.config.baseUrl).origin
  const rendered = new LruCache<Rendered>(CACHE_ENTRIES)
  const bySlug = new LruCache<{ id: string | null; at: number }>(CACHE_ENTRIES * 4)
  // Bumped by every invalidation: a read that began before one is answered but not kept (PostgreSQL's reads
  // await, so a notice can arrive while one is under way).
  let generation = 0
  // Reads of a page under way on PostgreSQL: visitors arriving meanwhile wait for the same read rather than
  // each taking a connection of the pool (a popular page just changed).
  const reading = new Map<string, Promise<Rendered | null>>()
  let counts = new Map<string, { pageId: string; blockId: string; day: number; count: number }>()

  const fresh = <E extends { at: number }>(entry: E | undefined): E | undefined => {
    if (entry === undefined) return undefined
    if (ttlMs === Infinity) return entry
    const age = clock.now() - entry.at
    return age >= 0 && age < ttlMs ? entry : undefined
  }

  function count(pageId: string, blockId: string) {
    const day = Math.floor(clock.now() / DAY_MS) * DAY_MS
    const key = `${pageId}|${blockId}|${day}`
    const entry = counts.get(key)
    if (entry) entry.count++
    else counts.set(key, { pageId, blockId, day, count: 1 })
  }

  /** A person's GET of a live page counts; bots, HEAD and test pages never do. */
  const counted = (request: Request, row: Pick<PageRow, 'isTest'>) => request.method === 'GET' && !row.isTest && !isBot(request.headers.get('user-agent') ?? '')

  const linkIdsOf = (tree: TreeSection[]) => [
    ...new Set(tree.flatMap((s) => s.columns.flatMap((c) => c.blocks.flatMap((b) => blockType(b.type)?.linkIds?.(b.fields) ?? [])))),
  ]

  function build(row: PageRow, tree: TreeSection[], links: LinkTarget[], at: number): Rendered {
    const targets = new Map(links.map((l) => [l.id, l]))
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
    return { row, html: page.html, headers: page.headers, etag, at }
  }

  function keep<E>(cache: LruCache<E>, key: string, entry: E, since: number): E {
    if (since === generation) cache.set(key, entry)
    return entry
  }

  /** Reads under way began before a change: their results are answered but neither kept nor shared. */
  function forgetReads() {
    generation++
    reading.clear()
  }

  function render(id: string): Rendered | null | Promise<Rendered | null> {
    const cached = fresh(rendered.get(id))
    if (cached) return cached
    const since = generation
    const at = clock.now()
    if (syncReads) {
      const row = syncReads.findByIdSync(id)
      if (!row) return null
      const tree = syncReads.treeSync(id)
      return keep(rendered, id, build(row, tree, syncReads.linkTargetsSync(linkIdsOf(tree)), at), since)
    }
    const under = reading.get(id)
    if (under) return under
    const read = (async () => {
      const [row, tree] = await Promise.all([pages.findById(id), pages.tree(id)])
      if (!row) return null
      const links = await pages.linkTargets(row.workspaceId, linkIdsOf(tree))
      return keep(rendered, id, build(row, tree, links, at), since)
    })().finally(() => {
      if (reading.get(id) === read) reading.delete(id)
    })
    reading.set(id, read)
    return read
  }

  /** The id of the page at `slug` on the domain, or null. */
  function pageAt(domain: string, slug: string): string | null | Promise<string | null> {
    const key = `${domain}|${slug}`
    const cached = fresh(bySlug.get(key))
    if (cached) return cached.id
    const since = generation
    const at = clock.now()
    const found = syncReads ? syncReads.findBySlugSync(domain, slug) : pages.findBySlug(domain, slug)
    return andThen(found, (row) => keep(bySlug, key, { id: row?.id ?? null, at }, since).id)
  }

  function answer(entry: Rendered, request: Request, cache: string): Response {
    const headers = { ...entry.headers, etag: entry.etag, 'cache-control': entry.row.isTest ? 'no-store' : cache }
    if (request.headers.get('if-none-match') === entry.etag) return new Response(null, { status: 304, headers })
    return new Response(request.method === 'HEAD' ? null : entry.html, { status: 200, headers })
  }

  const notHere = (workspaceId: string, target: VisitTarget) => target.customWorkspaceId !== null && target.customWorkspaceId !== workspaceId

  function clicked(request: Request, blockId: string, index: string | null, target: VisitTarget, owner: BlockOwner | undefined): Response | null {
    if (!owner || notHere(owner.workspaceId, target)) return null
    const i = index === null ? 0 : /^\d{1,3}$/.test(index) ? Number(index) : -1
    const url = i < 0 ? null : (blockType(owner.type)?.outboundUrl?.(owner.fields, i) ?? null)
    if (url === null) return null
    if (owner.isTest) {
      return htmlPage({
        title: 'Test page',
        body:
          `<h1>Test page</h1><p>This button of a test page would lead to:</p><p class="dest">${escapeHtml(url)}</p><p class="muted">Test pages ` +
          `never send visitors on and count nothing.</p>`,
        headers: { 'x-robots-tag': 'noindex' },
      })
    }
    if (counted(request, owner)) count(owner.pageId, blockId)
    return new Response(null, {
      status: 302,
      headers: { location: url, 'cache-control': 'private, no-store', 'referrer-policy': 'strict-origin-when-cross-origin', 'x-robots-tag': 'noindex' },
    })
  }

  return {
    /** `/p/{slug}` or `/_/b/{blockId}` on a short host; null for any other path. */
    handle(request: Request, path: string, search: string, target: VisitTarget): VisitAnswer {
      const page = PAGE_SLUG.exec(path)
      if (page) return this.page(request, page[1]!, target)
      const button = BUTTON.exec(path)
      if (button) return this.button(request, button[1]!, new URLSearchParams(search).get('i'), target)
      return null
    },

    page(request: Request, slug: string, target: VisitTarget): VisitAnswer {
      return andThen(pageAt(target.domain, slug), (id) =>
        id === null
          ? null
          : andThen(render(id), (entry) => {
              if (entry === null || notHere(entry.row.workspaceId, target)) return null
              if (counted(request, entry.row)) count(entry.row.id, '')
              // Short: a changed page shows within a minute, and revalidation is cheap (ETag).
              return answer(entry, request, 'public, max-age=60')
            }),
      )
    },

    /** A link with bridgePageId shows its page; null when the page is gone (the redirect goes ahead). */
    show(request: Request, pageId: string): VisitAnswer {
      return andThen(render(pageId), (entry) => {
        if (entry === null) return null
        if (counted(request, entry.row)) count(entry.row.id, '')
        // The link's URL is counted per visit: never cached by others.
        return answer(entry, request, 'private, no-store')
      })
    },

    button(request: Request, blockId: string, index: string | null, target: VisitTarget): VisitAnswer {
      const owner = syncReads ? syncReads.blockOwnerSync(blockId) : pages.blockOwner(blockId)
      return andThen(owner, (found) => clicked(request, blockId, index, target, found))
    },

    /** A page changed or was deleted. Slugs are dropped wholesale: a rename frees one and takes another. */
    invalidate(id: string) {
      forgetReads()
      rendered.delete(id)
      bySlug.clear()
    },

    /** A link changed: any page's button may show its short URL. */
    invalidateAll() {
      forgetReads()
      rendered.clear()
    },

    /** Notices may have been lost (caches.reset): nothing cached can be trusted. */
    reset() {
      forgetReads()
      rendered.clear()
      bySlug.clear()
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
