// The sandbox of test keys (spec section 1), as every area applies it: a test key reads and changes test
// records only, and a live record does not exist for it. A live key owns the workspace: its lists show live
// records unless it asks for test ones (mode=test) or both (mode=all), and it may read and change a test
// record it names by id.
import { t } from 'elysia'
import { testKeySandboxed } from './errors'
import type { KeyMode } from './keys'

export const MODE_FILTERS = ['live', 'test', 'all'] as const
export type ModeFilter = (typeof MODE_FILTERS)[number]

/** The `mode` query parameter of a list, for its route's schema. */
export const ModeQuery = (records: string) =>
  t.Optional(
    t.Union(
      MODE_FILTERS.map((m) => t.Literal(m)),
      {
        description:
          `Which ${records} to list: live, test or all. Defaults to the calling key's mode; a test key may only list test ${records} ` +
          `(anything else is 403 forbidden).`,
      },
    ),
  )

/**
 * The mode a list covers for `asked` (undefined: both). A test key asking for more than the sandbox is
 * refused rather than answered with test records only: it would take a partial list for the whole.
 */
export function listedMode(caller: { mode: KeyMode }, asked: ModeFilter | undefined, records: string): KeyMode | undefined {
  if (caller.mode === 'test') {
    if (asked !== undefined && asked !== 'test') {
      throw testKeySandboxed(records, asked)
    }
    return 'test'
  }
  const mode = asked ?? 'live'
  return mode === 'all' ? undefined : mode
}

/** Whether a record is hidden from the caller by the sandbox: a live record asked for with a test key. */
export const sandboxHides = (caller: { mode: KeyMode }, record: { isTest: boolean }) => caller.mode === 'test' && !record.isTest
