// The clicks area's ports: the click records the redirect path hands over, the flush that writes them, the
// reservations of clicks under limits (PostgreSQL) and the admitted addresses the redirect path reads, in
// plain types. repo.ts answers them on either engine; repo-sqlite.ts answers SQLite's hot paths with
// statements prepared once.

/** A served click as the redirect path hands it over: plain data, so it can cross to the writer thread. */
export interface ClickRecord {
  id: string
  linkId: string
  workspaceId: string
  clickedAt: number
  /** The client address; held in memory until the flush hashes it, never written. */
  ip: string
  userAgent: string | null
  referrer: string | null
  referrerHost: string | null
  /** The routing rule whose destination the visit was sent to (link routingRules), else null. */
  ruleId: string | null
  /** The A/B variant the visit was sent to (link variants), else null. */
  variantId: string | null
  /**
   * The destination chosen for the visit as the link stores it (its rule's, its variant's or its own), before
   * UTM fields, the visitor's query and lnk_cid are added: link.clicked names it, the clicks table does not.
   */
  destinationUrl: string
  /** Keyed hash of a client address newly admitted under uniqueIpLimit (never set for a bot). */
  newAddress: string | null
  /** A bot's hit (a crawler's preview included): stored for the bot count, never counted as a click. */
  isBot: boolean
  /** Whether anyone listens for link.clicked in the workspace (events/interest.ts): only then is it written. */
  announce: boolean
  /**
   * Already counted by a reservation (ClickReservations, PostgreSQL, links under limits): the link's
   * total_clicks and the admitted address were written when it was served, so the flush adds neither again.
   */
  counted?: boolean
}

/** Clicks kept as counts only (the buffer was full, see click-buffer.ts): one link, one UTC hour. */
export interface ClickCounts {
  linkId: string
  workspaceId: string
  hour: number
  clicks: number
  bots: number
}

/** One flush's write: clicks in full, and clicks kept as counts. */
export interface ClickBatch {
  clicks: ClickRecord[]
  counts: ClickCounts[]
}

/** What a reservation answers: the click may be served, or the limit that refused it. */
export type Reservation = 'ok' | 'clickLimit' | 'uniqueIpLimit'

/**
 * PostgreSQL only: the decision a person's click on a link with clickLimit or uniqueIpLimit takes in the
 * database before it is served, so the limits hold across nodes. SQLite's one process counts them in memory.
 */
export interface ClickReservations {
  /**
   * One atomic decision: under clickLimit, total_clicks is added to only while below it; under
   * uniqueIpLimit, `address` (the keyed hash of the client address) is admitted only if already admitted or
   * while fewer than the limit are. An accepted click has its total_clicks and address written.
   */
  reserveClick(linkId: string, address: string | null, now: number): Promise<Reservation>
}

/** Click storage: the one read the redirect path makes, and the flush's write. */
export interface ClicksRepo {
  /** The keyed hashes of the addresses admitted under the link's uniqueIpLimit, in byte order. */
  admittedAddresses(linkId: string): Promise<string[]>
  /** One transaction: clicks, visitors, admitted addresses, the links' counters, events and rollups. */
  writeBatch(batch: ClickBatch, now: number): Promise<void>
}

/** SQLite only: the redirect path loads a link's admitted addresses once, without awaiting. */
export interface ClickHotReads {
  admittedAddressesSync(linkId: string): string[]
}
