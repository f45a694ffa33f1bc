// Bulk change and bulk delete (contract 7.3): up to 1000 links named by id or ext_{externalId}, one result per
// id in the order sent. Each link goes through the single-link update or delete, in a transaction of its own,
// so every rule of PATCH and DELETE holds for it (sandbox, scope, field checks, its event) and one link's
// refusal never holds up the others.
import { AppError } from '../../platform/errors'
import type { Caller } from '../identity'
import type { LinksCtx } from './context'
import { bulkError } from './errors'
import type { UpdateLinkInput } from './model'
import { deleteLink, updateLink } from './service'
import type { LinkView } from './view'

export const BULK_EDIT_MAX = 1000

type ItemError = ReturnType<typeof bulkError>
export type BulkEditResult = { id: string; ok: true; link: LinkView } | { id: string; ok: false; error: ItemError }
export type BulkDeleteResult = { id: string; ok: true; deleted: true } | { id: string; ok: false; error: ItemError }

/** Runs `one` for each id in order; a refusal (an AppError) becomes that id's result, anything else is a fault. */
async function each<T>(
  ids: string[],
  one: (id: string) => Promise<T>,
): Promise<({ id: string; ok: true; value: T } | { id: string; ok: false; error: ItemError })[]> {
  const out: ({ id: string; ok: true; value: T } | { id: string; ok: false; error: ItemError })[] = []
  for (const id of ids) {
    try {
      out.push({ id, ok: true, value: await one(id) })
    } catch (err) {
      if (!(err instanceof AppError)) throw err
      out.push({ id, ok: false, error: bulkError(err) })
    }
  }
  return out
}

/** Applies `set` (a PATCH body without slug and externalId, which name one link each) to every link named. */
export async function bulkUpdate(ctx: LinksCtx, caller: Caller, ids: string[], set: UpdateLinkInput): Promise<BulkEditResult[]> {
  // One hash for every link: argon2id costs tens of milliseconds by design, a thousand of them minutes.
  const hashed = typeof set.password === 'string' ? { passwordHash: await Bun.password.hash(set.password, { algorithm: 'argon2id' }) } : undefined
  const results = await each(ids, (id) => updateLink(ctx, caller, id, set, hashed))
  return results.map((r) => (r.ok ? { id: r.id, ok: true, link: r.value } : r))
}

export async function bulkDelete(ctx: LinksCtx, caller: Caller, ids: string[]): Promise<BulkDeleteResult[]> {
  const results = await each(ids, (id) => deleteLink(ctx, caller, id))
  return results.map((r) => (r.ok ? { id: r.id, ok: true, deleted: true } : r))
}
