// The folders area's port: plain types, no engine (repo.ts answers it on either engine).
import type { PublishInput } from '../../events/outbox'
import type { LinkRow } from '../links'

export interface FolderRow {
  id: string
  workspaceId: string
  name: string
  description: string | null
  createdAt: number
  updatedAt: number
}

/** Which of a workspace's links count: one mode's, within a key's scope filters (null: no filters). */
export interface LinkScope {
  workspaceId: string
  isTest: boolean
  scope: { domains?: string[]; tags?: string[]; folders?: string[] } | null
}

/** What happens to a folder's links (live and test alike) when it is deleted. */
export type LinksOnDelete =
  | { kind: 'refuse' }
  | { kind: 'move'; to: string; event: (row: LinkRow) => PublishInput }
  | { kind: 'delete'; event: (row: LinkRow) => PublishInput }

export type DeleteOutcome =
  | { ok: true; moved: LinkRow[]; deleted: LinkRow[] }
  | { ok: false; reason: 'gone' }
  | { ok: false; reason: 'not_empty'; links: number }
  | { ok: false; reason: 'target_gone' }

export interface FoldersRepo {
  /** The workspace's folders by name (byte order), then id; `only`: just these ids. */
  list(workspaceId: string, only?: readonly string[]): Promise<FolderRow[]>
  find(workspaceId: string, id: string): Promise<FolderRow | undefined>
  /** Links per folder among `ids`, counting only the links `scope` covers. */
  linkCounts(ids: readonly string[], scope: LinkScope): Promise<Map<string, number>>
  /** The folder's links (both modes) that `scope`'s domain and tag filters leave out (its mode is ignored). */
  linksOutsideScope(workspaceId: string, folderId: string, scope: LinkScope['scope']): Promise<number>
  insert(row: FolderRow, event: PublishInput, now: number): Promise<void>
  update(
    workspaceId: string,
    id: string,
    patch: Partial<Pick<FolderRow, 'name' | 'description' | 'updatedAt'>>,
    event: (row: FolderRow) => PublishInput,
    now: number,
  ): Promise<FolderRow | undefined>
  /**
   * Deletes the folder in one transaction with what `links` says of its links, their events and the folder's
   * own (built from what was moved and deleted).
   */
  delete(
    workspaceId: string,
    id: string,
    links: LinksOnDelete,
    event: (row: FolderRow, moved: number, deleted: number) => PublishInput,
    now: number,
  ): Promise<DeleteOutcome>
}
