// The links services' context, apart from the services so that the field checks and the Link view can take
// it without importing the services that use them.
import type { Deps } from '../../context'
import type { EventBus } from '../../events/bus'
import type { ServedDomains } from '../domains'
import type { LinkQr } from './model'
import type { LinkListRepo } from './list-port'
import type { LinksRepo } from './port'

export interface LinksCtx extends Deps {
  links: LinksRepo
  /** GET /links: filters, sorts and pages (repo-list.ts). */
  linkList: LinkListRepo
  /** The custom domains served now: links may be made on a workspace's own, and never point at any. */
  served: Pick<ServedDomains, 'get'>
  /** Announces changed links after commit, so caches of them (the redirect's) drop them. */
  bus: Pick<EventBus, 'emit'>
  /** The bridge pages a link may show (bridgePageId). */
  bridgePages: { find(workspaceId: string, id: string): Promise<{ isTest: boolean } | undefined> }
  /** The workspace's folders a link may be filed in (folderId): the folders module's repo. */
  folders: { find(workspaceId: string, id: string): Promise<unknown> }
  /** A link's qr object (include=qr): the qr module renders it, and links are built before that module. */
  qr: LinkQr
}
