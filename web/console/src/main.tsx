// The console's entry: signs in with a key kept in sessionStorage, then renders the shell.
import { render } from 'preact'
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks'
import { api, setUnauthorizedHandler, storedKey, storeKey, type Me } from './api'
import { Shell } from './shell'
import { SignIn } from './sign-in'
import { permits, SessionContext, type Session } from './session'
import { Loading } from './ui/states'
import './styles.css'

function App() {
  const [me, setMe] = useState<Me | null>(null)
  const [checking, setChecking] = useState(() => storedKey() !== null)

  const signOut = useCallback(() => {
    storeKey(null)
    setMe(null)
    location.hash = ''
  }, [])

  useEffect(() => {
    setUnauthorizedHandler(signOut)
    const key = storedKey()
    if (!key) return
    // A reload keeps the tab's key: check it again, since it may have been revoked meanwhile.
    api
      .me(key)
      .then(setMe, () => storeKey(null))
      .finally(() => setChecking(false))
  }, [signOut])

  const session = useMemo<Session | null>(() => (me ? { me, can: (p) => permits(me.apiKey.permissions, p), signOut } : null), [me, signOut])

  if (checking) return <Loading label="Checking the saved key…" />
  if (!session) {
    return (
      <SignIn
        onSignedIn={(key, who) => {
          storeKey(key)
          setMe(who)
        }}
      />
    )
  }
  return (
    <SessionContext.Provider value={session}>
      <Shell />
    </SessionContext.Provider>
  )
}

render(<App />, document.getElementById('app')!)
