// Calls to a worker thread, each answered by its id: the protocol of the click writer and uniques threads.
// The thread answers { id, ok: true, value } or { id, ok: false, error } (answer(), in the thread). Once the
// thread itself fails, every call waiting or to come is refused with that error, and the owner told once.

type Reply = { id: number; ok: true; value?: unknown } | { id: number; ok: false; error: string }

export interface ThreadCalls {
  /** Posts `message` with an id; settles with the thread's answer to it. */
  call<T = void>(message: Record<string, unknown>): Promise<T>
  /** The error the thread failed with, once it has. */
  readonly failed: Error | null
  /** Refuses every call waiting and to come (the thread failed or cannot serve). */
  fail(err: Error): void
}

export function threadCalls(worker: Worker, onFail: (err: Error) => void): ThreadCalls {
  const pending = new Map<number, { resolve: (value: any) => void; reject: (e: Error) => void }>()
  let next = 0
  let failed: Error | null = null
  const fail = (err: Error) => {
    if (failed) return
    failed = err
    onFail(err)
    for (const p of pending.values()) p.reject(err)
    pending.clear()
  }
  worker.addEventListener('message', (e: MessageEvent<Reply>) => {
    const p = pending.get(e.data.id)
    if (!p) return
    pending.delete(e.data.id)
    if (e.data.ok) p.resolve(e.data.value)
    else p.reject(new Error(e.data.error))
  })
  worker.addEventListener('error', (e) => fail(new Error((e as ErrorEvent).message || 'worker error')))
  return {
    call<T>(message: Record<string, unknown>) {
      if (failed) return Promise.reject(failed)
      const id = ++next
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve, reject })
        worker.postMessage({ ...message, id })
      })
    },
    get failed() {
      return failed
    },
    fail,
  }
}

/** In the thread: answers call `id` with what `run` gives, or with the message of what it throws. */
export async function answer(id: number, run: () => unknown): Promise<void> {
  try {
    postMessage({ id, ok: true, value: await run() })
  } catch (err) {
    postMessage({ id, ok: false, error: err instanceof Error ? err.message : String(err) })
  }
}
