// Who is calling: the key, its user, the workspace acted in and the key's mode. Built by authentication
// (auth.ts), handed to routes by the HTTP kernel's permission macro and read by every service, which never
// imports the HTTP layer for it.
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
