// Loading, error and empty states, the same on every screen so nothing fails silently.
import type { ComponentChildren } from 'preact'
import { explain } from '../api'
import type { Async } from './async'

export const Loading = ({ label = 'Loading…' }: { label?: string }) => (
  <p class="state loading" role="status" aria-live="polite">
    {label}
  </p>
)

export function ErrorNotice({ error, retry }: { error: unknown; retry?: () => void }) {
  return (
    <div class="state error" role="alert">
      <p>{explain(error)}</p>
      {retry && (
        <button type="button" class="secondary" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  )
}

export const Empty = ({ children }: { children: ComponentChildren }) => <p class="state empty">{children}</p>

/** Renders `children(data)` once loaded; loading and errors otherwise (stale data stays visible while reloading). */
export function Loaded<T>({ state, children, label }: { state: Async<T>; children: (data: T) => ComponentChildren; label?: string }) {
  if (state.status === 'error') return <ErrorNotice error={state.error} retry={state.reload} />
  if (state.data === undefined) return <Loading label={label} />
  return <>{children(state.data)}</>
}
