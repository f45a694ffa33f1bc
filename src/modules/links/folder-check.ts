// A link's folderId (contract 7.3): a folder of the link's workspace, or null. Folders are shared by live and
// test links, so a test link may be filed in any folder of its workspace.
import type { Issues } from '../../platform/errors'
import type { Caller } from '../identity'
import type { LinksCtx } from './context'

export async function checkFolder(ctx: Pick<LinksCtx, 'folders'>, caller: Pick<Caller, 'workspace'>, issues: Issues, id: string | null | undefined) {
  if (id == null) return
  if (!(await ctx.folders.find(caller.workspace.id, id))) issues.add('folderId', `${id} is not a folder of this workspace (GET /folders lists them)`)
}
