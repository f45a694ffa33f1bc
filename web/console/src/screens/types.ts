import type { ComponentType } from 'preact'

export interface ScreenProps {
  /** The route's named parts ('/links/:id' gives { id }). */
  params: Record<string, string>
  /** The query after the hash path ('#/links?q=x'). */
  query: URLSearchParams
}

export interface ScreenRoute {
  /** '/links', '/links/:id': matched in the order given, first match wins. */
  path: string
  component: ComponentType<ScreenProps>
  /** Listed in the navigation when the key holds this permission. */
  nav?: { label: string; permission: string }
}
