// Who is signed in: the key (kept in sessionStorage, so it leaves with the tab) and what GET /v1/me said
// of it. Screens ask can('links:write') to decide which controls to show; the server still decides.
import { createContext } from 'preact'
import { useContext } from 'preact/hooks'
import type { Me } from './api'

export interface Session {
  me: Me
  can(permission: string): boolean
  signOut(): void
}

export const SessionContext = createContext<Session | null>(null)

export function useSession(): Session {
  const session = useContext(SessionContext)
  if (!session) throw new Error('useSession outside a signed-in console')
  return session
}

export const permits = (permissions: string[], permission: string) => permissions.includes('*') || permissions.includes(permission)
