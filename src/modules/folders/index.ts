// Folders (contract 7.3): a workspace's folders as resources, the links filed in them counted per key, and
// deletion that moves or deletes its links in the same transaction. The links module checks a link's folderId
// against this module's repo.
import { engineOf, onEngine } from '../../db/store'
import { preparedPublisher } from '../../events/outbox'
import type { HttpKit } from '../identity'
import { defineModule, type Platform } from '../module'
import { FOLDER_EVENTS } from './model'
import { createFoldersRepo } from './repo'
import { folderRoutes } from './routes'
import type { FoldersCtx } from './service'

// What other modules, the app and the CLI use of folders.
export type { FolderRow, FoldersRepo } from './port'
export { listFolders, type FoldersCtx } from './service'

export function createFoldersModule(platform: Platform, http: HttpKit) {
  const { config, clock, log, bus, store } = platform
  const repo = createFoldersRepo(
    engineOf(store),
    onEngine(
      store,
      (s) => preparedPublisher(s.db.db),
      () => undefined,
    ),
  )
  const ctx: FoldersCtx = { config, clock, log, bus, folders: repo }
  return defineModule({ name: 'folders', events: FOLDER_EVENTS, ctx, repo, routes: folderRoutes(ctx, http) })
}

export type FoldersModule = ReturnType<typeof createFoldersModule>
