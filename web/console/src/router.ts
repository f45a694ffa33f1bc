// Hash routes (#/links/lnk_1?tab=qr): the server serves one page at /console, and a reload or a shared
// address lands on the same screen with no server-side routing.
import { useEffect, useState } from 'preact/hooks'
import { withQuery, type Query } from './query'

export interface Route {
  /** The path after '#', without its query: '/links/lnk_1'. */
  path: string
  query: URLSearchParams
}

export function currentRoute(): Route {
  const raw = location.hash.replace(/^#/, '') || '/'
  const [path = '/', query = ''] = raw.split('?', 2) as [string, string?]
  return { path: path.startsWith('/') ? path : `/${path}`, query: new URLSearchParams(query) }
}

export function useRoute(): Route {
  const [route, setRoute] = useState(currentRoute)
  useEffect(() => {
    const update = () => setRoute(currentRoute())
    addEventListener('hashchange', update)
    // A change between the first render and this listener would otherwise go unseen.
    update()
    return () => removeEventListener('hashchange', update)
  }, [])
  return route
}

/** An href for a console route, with an optional query. */
export const href = (path: string, query?: Query): string => `#${withQuery(path, query)}`

export const navigate = (path: string, query?: Query) => void (location.hash = href(path, query).slice(1))

/**
 * Matches '/links/:id' against a path; answers the named parts, or null. A part is decoded, so ids with
 * reserved characters round-trip.
 */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/')
  const got = path.split('/')
  if (want.length !== got.length) return null
  const params: Record<string, string> = {}
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!
    const g = got[i]!
    if (w.startsWith(':')) {
      if (!g) return null
      params[w.slice(1)] = decodeURIComponent(g)
    } else if (w !== g) return null
  }
  return params
}
