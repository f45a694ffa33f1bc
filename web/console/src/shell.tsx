// The signed-in frame: header with the workspace, the key and sign-out, the navigation the key's
// permissions allow, and the current screen. Focus moves to the screen's heading on every route change.
import { useEffect, useRef } from 'preact/hooks'
import { currentRoute, href, match, useRoute } from './router'
import { SCREENS } from './screens'
import { useSession } from './session'
import { Empty } from './ui/states'

export function Shell() {
  const session = useSession()
  const route = useRoute()
  const main = useRef<HTMLElement>(null)
  const nav = SCREENS.filter((s) => s.nav && session.can(s.nav.permission))
  const first = useRef(true)

  useEffect(() => {
    if (first.current) return void (first.current = false)
    // After the screen renders: its first heading, else the main region.
    requestAnimationFrame(() => (main.current?.querySelector<HTMLElement>('h1') ?? main.current)?.focus())
  }, [route.path])

  let screen = null
  for (const s of SCREENS) {
    const params = match(s.path, route.path)
    if (params) {
      screen = <s.component params={params} query={route.query} />
      break
    }
  }
  const home = !screen && route.path === '/' ? nav[0]?.path : undefined
  useEffect(() => {
    // After the first render, when useRoute listens: the start page is the first area the key may read.
    // Only while the address is still the bare console: the effect runs a frame later, and a route
    // chosen meanwhile (a link followed, an address typed) must not be sent back to the start page.
    if (home && currentRoute().path === '/') location.replace(href(home))
  }, [home])

  const { me } = session
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), main.current?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="#/">
          lnk
        </a>
        <span class="workspace" title={`Workspace ${me.workspace.slug}`}>
          {me.workspace.name}
        </span>
        {me.apiKey.mode === 'test' && <span class="badge test">Test mode</span>}
        <span class="key">
          <span class="visually-hidden">Signed in with key </span>
          {me.apiKey.name} <code>{me.apiKey.keyPrefix}…</code>
        </span>
        <button type="button" class="secondary small" onClick={session.signOut}>
          Sign out
        </button>
      </header>
      <nav class="main-nav" aria-label="Sections">
        <ul>
          {nav.map((s) => (
            <li>
              <a href={href(s.path)} aria-current={route.path === s.path || route.path.startsWith(`${s.path}/`) ? 'page' : undefined}>
                {s.nav!.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" ref={main} tabIndex={-1}>
        {screen ?? (route.path !== '/' ? <NotFound /> : nav.length ? null : <Empty>This key has no permission to read anything the console shows.</Empty>)}
      </main>
    </>
  )
}

function NotFound() {
  return (
    <>
      <h1 tabIndex={-1}>Not found</h1>
      <p>
        There is no screen at this address. <a href="#/">Go to the start</a>.
      </p>
    </>
  )
}
