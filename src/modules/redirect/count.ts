// Counting a served visit: the link's live counters first (synchronously, so concurrent visitors never
// overshoot a limit), then the click handed to the buffer as plain data. The visitor hash, the enrichment
// (country, device…) and the event are made by the writer, off the redirect path.
import type { ClickBuffer } from '../clicks'
import { sortableId } from '../../platform/random'
import type { CachedLink } from './cache'
import type { Route } from './routing'

export interface VisitCounterDeps {
  clickBuffer: Pick<ClickBuffer, 'add'>
}

export function createVisitCounter(deps: VisitCounterDeps, keyed: (value: string) => string) {
  /** The keyed hash a client address is admitted under (uniqueIpLimit); `ipHash` when already made. */
  const address = (ip: string, ipHash: string | null) => ipHash ?? keyed(`ip|${ip}`)

  function buffer(
    entry: CachedLink,
    request: Request,
    ip: string,
    ua: string,
    now: number,
    newAddress: string | null,
    isBot: boolean,
    counted: boolean,
    route: Route | null,
  ): string {
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
      ruleId: route === null ? null : route.ruleId,
      variantId: route === null ? null : route.variantId,
      destinationUrl: route === null ? link.destinationUrl : route.destinationUrl,
      newAddress,
      isBot,
      announce: false,
      counted,
    })
    return clickId
  }

  return {
    address,

    /**
     * A person's click: counted against the link's limits and buffered. `admitted` is the link's admitted
     * addresses (under a uniqueIpLimit); `counted`: a reservation already counted it in the database;
     * `route`: where the visit is sent, when the link routes. Answers the click id.
     */
    click(
      entry: CachedLink,
      request: Request,
      ip: string,
      ua: string,
      now: number,
      ipHash: string | null,
      admitted: Set<string> | null,
      counted: boolean,
      route: Route | null,
    ): string {
      entry.clicksSoFar++
      let newAddress: string | null = null
      if (entry.row.uniqueIpLimit !== null && admitted !== null) {
        const hash = address(ip, ipHash)
        if (!admitted.has(hash)) {
          admitted.add(hash)
          newAddress = hash
        }
      }
      return buffer(entry, request, ip, ua, now, newAddress, false, counted, route)
    },

    /**
     * A bot's hit (a crawler's preview too, never routed): buffered for the bot count, touching no limit,
     * given no click id.
     */
    botHit(entry: CachedLink, request: Request, ip: string, ua: string, now: number, route: Route | null) {
      buffer(entry, request, ip, ua, now, null, true, false, route)
    },
  }
}
