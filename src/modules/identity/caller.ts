// Who is calling: the key, its user, the workspace acted in and the key's mode. Built by the HTTP layer's
// authentication, read by every service; it lives here, below both, so services never import the HTTP layer.
import type { KeyMode } from './keys'
import type { ApiKeyRow, UserRow, WorkspaceRow } from './port'

export interface Caller {
  key: ApiKeyRow
  user: UserRow
  workspace: WorkspaceRow
  role: 'owner' | 'member'
  mode: KeyMode
  ip: string | null
}
