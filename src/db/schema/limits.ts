// Limits that several nodes on one PostgreSQL share (issue 18): request rates and the password throttle count
// here, and spent captcha solutions are remembered here. A single SQLite process keeps them in memory
// instead, so on SQLite these tables stay empty. Rows are short-lived and pruned once they expire.
import { index, int, table, text, time } from '../columns'

/**
 * One counter in one window. The name says what is counted and, for fixed windows (request rates per
 * minute), which window, so a new window is a new row; a window opened by its first event (the password
 * throttle) is one row restarted in place. Kept until `expires_at`, when nothing reads it any more.
 */
export const limitWindows = table(
  'limit_windows',
  {
    name: text('name').primaryKey(),
    windowStart: time('window_start').notNull(),
    count: int('count').notNull(),
    expiresAt: time('expires_at').notNull(),
  },
  (t) => [index('limit_windows_expires_idx').on(t.expiresAt)],
)

/** A captcha solution's signature once it has been accepted: refused on every node until it expires. */
export const spentCaptchas = table(
  'spent_captchas',
  {
    signature: text('signature').primaryKey(),
    expiresAt: time('expires_at').notNull(),
  },
  (t) => [index('spent_captchas_expires_idx').on(t.expiresAt)],
)
