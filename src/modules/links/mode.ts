// The sandbox rule of test keys (spec section 1), shared by links, QR codes and analytics. A test key works
// in a sandbox: it reads and changes test records only, and a live record does not exist for it. A live key
// owns the workspace: its lists show live records unless it asks for test ones (mode=test or mode=all), and
// it may read and change a test record it names by id.
import type { Caller } from '../../http/auth'
import { AppError } from '../../http/errors'

export const MODE_FILTERS = ['live', 'test', 'all'] as const
export type ModeFilter = (typeof MODE_FILTERS)[number]

/**
 * Which records a list covers, as an isTest filter (undefined: both) for a `mode` the caller sent or left out.
 * A test key asking for live records is refused rather than quietly answered with test ones: it would read
 * an empty or partial answer as the truth about the workspace.
 */
export function listedMode(caller: Pick<Caller, 'mode'>, asked: ModeFilter | undefined): boolean | undefined {
  if (caller.mode === 'test') {
    if (asked !== undefined && asked !== 'test') {
      throw new AppError('forbidden', `A test key sees only test records; use mode=test or leave mode out (mode=${asked} needs a live key)`, { mode: asked, keyMode: 'test' })
    }
    return true
  }
  const mode = asked ?? 'live'
  return mode === 'all' ? undefined : mode === 'test'
}

/** Whether a record is hidden from the caller by the sandbox: a live record asked for with a test key. */
export const sandboxHides = (caller: Pick<Caller, 'mode'>, record: { isTest: boolean }) => caller.mode === 'test' && !record.isTest
