// The tags area's port: what its service asks of storage, in plain types (repo.ts answers it on either engine).
import type { PublishInput } from '../../events/outbox'

export interface TagRow {
  id: string
  workspaceId: string
  name: string
  color: string | null
  createdAt: number
  updatedAt: number
}

/** Which links a tag's linkCount counts: the caller's mode (undefined: both) and its domain and folder scope. */
export interface CountFilter {
  isTest?: boolean
  domains?: string[]
  folders?: string[]
}

export interface TagChange {
  name?: string
  color?: string | null
}

/** What a change or a deletion did: the tag before and after, and how many links it rewrote. */
export interface TagOutcome {
  before: TagRow
  after: TagRow
  linksChanged: number
}

export interface TagsRepo {
  /** The workspace's tags by name (bytewise), only `names` when given (a key's tag scope). */
  list(workspaceId: string, names: string[] | undefined, page: number, perPage: number): Promise<{ rows: TagRow[]; total: number }>
  /** Links carrying each of `names` in the workspace, among those the filter admits; names without links are absent. */
  counts(workspaceId: string, names: string[], filter: CountFilter): Promise<Map<string, number>>
  find(workspaceId: string, id: string): Promise<TagRow | undefined>
  /** Inserts the tag and publishes its event; 'exists' when the workspace has the name already. */
  create(row: TagRow, event: (row: TagRow) => PublishInput, now: number): Promise<TagRow | 'exists'>
  /**
   * Renames and/or recolours the tag in one transaction; a rename rewrites every link of the workspace carrying
   * it (tags, link_tags, search text, updatedAt) set-based. 'exists' when the new name is another tag's;
   * undefined when the tag is gone.
   */
  update(workspaceId: string, id: string, change: TagChange, event: (o: TagOutcome) => PublishInput, now: number): Promise<TagOutcome | 'exists' | undefined>
  /** Deletes the tag and removes it from every link of the workspace, in one transaction; undefined when gone. */
  delete(workspaceId: string, id: string, event: (o: TagOutcome) => PublishInput, now: number): Promise<TagOutcome | undefined>
}
