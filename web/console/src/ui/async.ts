// Loading state for a screen's data: every fetch has a loading, an error and a loaded state, and a reload.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks'

export type Async<T> =
  | { status: 'loading'; data?: T; error?: undefined; reload(): void }
  | { status: 'error'; data?: T; error: unknown; reload(): void }
  | { status: 'ready'; data: T; error?: undefined; reload(): void }

/** Runs `load` now and whenever a dependency changes; an answer that arrives after a newer call is dropped. */
export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): Async<T> {
  const [state, setState] = useState<{ status: 'loading' | 'error' | 'ready'; data?: T; error?: unknown }>({ status: 'loading' })
  const generation = useRef(0)
  const run = useCallback(() => {
    const mine = ++generation.current
    setState((s) => ({ status: 'loading', data: s.data }))
    load().then(
      (data) => mine === generation.current && setState({ status: 'ready', data }),
      (error) => mine === generation.current && setState((s) => ({ status: 'error', data: s.data, error })),
    )
  }, deps)
  useEffect(run, [run])
  return { ...state, reload: run } as Async<T>
}

/** A user action's state: busy while it runs, its error kept to show next to the control. */
export function useAction<A extends unknown[], R>(action: (...args: A) => Promise<R>) {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const run = useCallback(
    async (...args: A): Promise<R | undefined> => {
      setBusy(true)
      setError(null)
      try {
        return await action(...args)
      } catch (err) {
        setError(err)
        return undefined
      } finally {
        setBusy(false)
      }
    },
    [action],
  )
  return { run, busy, error, clearError: () => setError(null) }
}
