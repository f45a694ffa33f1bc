// Counting a served visit: the link's live counters first (synchronously, so concurrent visitors never
// overshoot a limit), then the click handed to the buffer as plain data. The visitor hash, the enrichment
// (country, device…) and the event are made by the writer, off the redirect path.
import type { ClickBuffer } from '../clicks/click-buffer'
import { sortableId } from '../../platform/random'
import type { CachedLink, LinkCache } from './cache'

export interface VisitCounterDeps {
  linkCache: Pick<LinkCache, 'admitted'>
  clickBuffer: Pick<ClickBuffer, 'add'>
}

export function createVisitCounter(deps: VisitCounterDeps, keyed: (value: string) => string) {
  function buffer(entry: CachedLink, request: Request, ip: string, ua: string, now: number, newAddress: string | null, isBot: boolean): string {
    const link = entry.row
    const clickId = sortableId('clk', now)
    const referrer = request.headers.get('referer')
    let referrerHost: string | null = null
    if (referrer) {
      try {
        referrerHost = new URL(referrer).hostname.toLowerCase()
      } catch {
        referrerHost = null
      }
    }
    deps.clickBuffer.add({
      id: clickId,
      linkId: link.id,
      workspaceId: link.workspaceId,
      clickedAt: now,
      ip,
      userAgent: ua.slice(0, 512) || null,
      referrer: referrer?.slice(0, 2048) ?? null,
      referrerHost,
      newAddress,
      isBot,
      announce: false,
    })
    return clickId
  }

  return {
    /** A person's click: counted against the link's limits and buffered. Answers the click id. */
    click(entry: CachedLink, request: Request, ip: string, ua: string, now: number, ipHash: string | null): string {
      entry.served++
      let newAddress: string | null = null
      if (entry.row.uniqueIpLimit !== null) {
        const hash = ipHash ?? keyed(`ip|${ip}`)
        const admitted = deps.linkCache.admitted(entry)
        if (!admitted.has(hash)) {
          admitted.add(hash)
          newAddress = hash
        }
      }
      return buffer(entry, request, ip, ua, now, newAddress, false)
    },

    /** A bot's hit (a crawler's preview too): buffered for the bot count, touching no limit, given no click id. */
    botHit(entry: CachedLink, request: Request, ip: string, ua: string, now: number) {
      buffer(entry, request, ip, ua, now, null, true)
    },
  }
}
