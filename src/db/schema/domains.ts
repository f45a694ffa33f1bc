// Custom domains of workspaces: what was asked for, what DNS showed at the last check, and when to look again.
import { json, sql, table, text, time, uniqueIndex } from '../columns'
import { workspaces } from './identity'

export const VERIFICATION_STATUSES = ['pending', 'verified', 'failed'] as const
export const DNS_STATUSES = ['unknown', 'ok', 'misconfigured', 'conflicting'] as const
export const SSL_STATUSES = ['unmanaged', 'pending', 'active', 'failed'] as const

/** What the last check saw, per lookup: the values, [] for "no record", null when it could not tell. */
export interface SeenRecords {
  txt: string[] | null
  cname: string[] | null
  a: string[] | null
  aaaa: string[] | null
  /** The plain-HTTP check of /.well-known/lnk/<token>: reached this instance, or why not; null if not tried. */
  http: { reached: boolean; detail: string } | null
  /** Lookups that failed for a reason other than "no such record" (timeouts, SERVFAIL), by name. */
  errors: string[]
}

export const domains = table(
  'domains',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    domain: text('domain').notNull(),
    verificationStatus: text('verification_status', { enum: VERIFICATION_STATUSES }).notNull(),
    dnsStatus: text('dns_status', { enum: DNS_STATUSES }).notNull(),
    sslStatus: text('ssl_status', { enum: SSL_STATUSES }).notNull(),
    /** The value of the TXT record `_lnk-challenge.<domain>` that proves the workspace controls it. */
    token: text('token').notNull(),
    failureReason: text('failure_reason'),
    seen: json<SeenRecords | null>('seen'),
    rootRedirectUrl: text('root_redirect_url'),
    notFoundUrl: text('not_found_url'),
    expiredUrl: text('expired_url'),
    lastCheckedAt: time('last_checked_at'),
    nextCheckAt: time('next_check_at'),
    verifiedAt: time('verified_at'),
    /** When a verified domain's records stopped pointing here; it is served for 7 days from then. */
    misconfiguredAt: time('misconfigured_at'),
    createdAt: time('created_at').notNull(),
    updatedAt: time('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('domains_workspace_domain_idx').on(t.workspaceId, t.domain),
    // One workspace holds a domain: the first to be verified wins the claim race in this index.
    uniqueIndex('domains_verified_idx').on(t.domain).where(sql`verification_status = 'verified'`),
    uniqueIndex('domains_token_idx').on(t.token),
  ],
)
