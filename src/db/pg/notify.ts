// The change feed between nodes on one PostgreSQL: a writer publishes a notice inside its transaction, so
// PostgreSQL sends it at commit and drops it on rollback; each node listens on one dedicated connection and
// drops what its caches hold. Notices sent while that connection is down are lost, so every (re)subscription
// after the first asks the node to clear everything (onReset). Bun's client does LISTEN itself (sql.listen:
// one connection per client for all its channels, reconnected with backoff and re-subscribed).
import { SQL } from 'bun'

/**
 * PostgreSQL refuses a payload of 8000 bytes or more (the default build). A larger change is published as the
 * reset notice instead: the write still commits, and listeners clear every cache, which is always safe.
 */
export const MAX_PAYLOAD_BYTES = 7999

/** The empty payload is the reset notice: "everything may have changed". A change never has it. */
export const RESET_PAYLOAD = ''

/** PostgreSQL's identifier limit (NAMEDATALEN - 1); pg_notify refuses longer channel names. */
const MAX_CHANNEL_BYTES = 63

/** A transaction of Bun's client (sql.begin's argument), or a client when the write is one statement. */
export type Notifier = Pick<SQL, 'notify'>

function checkChannel(channel: string) {
  if (!channel || Buffer.byteLength(channel) > MAX_CHANNEL_BYTES) throw new Error(`notice channel "${channel}" must be 1 to ${MAX_CHANNEL_BYTES} bytes`)
}

/** What goes out on `channel` for `payload`: the payload, or the reset notice when PostgreSQL would refuse it. */
export function noticePayload(channel: string, payload: string): string {
  checkChannel(channel)
  return Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES ? RESET_PAYLOAD : payload
}

/**
 * Publishes `payload` on `channel` inside `tx`: sent when it commits, never when it rolls back. A payload too
 * long for PostgreSQL (or empty) goes out as the reset notice.
 */
export async function publishChange(tx: Notifier, channel: string, payload: string): Promise<void> {
  await tx.notify(channel, noticePayload(channel, payload))
}

export type ResetCause = 'reconnected' | 'notice'

/** Called on the listen connection's reader: a handler that throws is reported as an uncaught exception. */
export interface ChangeHandlers {
  onChange(channel: string, payload: string): void
  /** Clear every cache: notices may have been lost (the connection dropped) or a change was too large to name. */
  onReset(cause: ResetCause): void
}

export interface ChangeListener {
  close(): Promise<void>
}

/** How the listener's connection shows in pg_stat_activity. */
export const LISTEN_APPLICATION_NAME = 'lnk-listen'

/**
 * Listens on `channels`. `source` is a URL (a client of its own, closed by close()) or a client, whose one
 * listen connection every listener on it shares: a node that listens for caches and for jobs through the same
 * client holds one connection. Resolves once every channel is subscribed.
 */
export async function listenChanges(source: string | SQL, channelList: string[], handlers: ChangeHandlers): Promise<ChangeListener> {
  const channels = [...new Set(channelList)]
  for (const channel of channels) checkChannel(channel)
  // A connection that only listens is idle; a server-wide idle_session_timeout would end it again and again.
  const sql =
    typeof source === 'string' ? new SQL(source, { max: 1, connection: { application_name: LISTEN_APPLICATION_NAME, idle_session_timeout: 0 } }) : source
  // How often each channel has been subscribed. A reconnect re-subscribes the channels one by one; the reset
  // waits until every channel is back, else a change on a channel not yet re-subscribed could still be lost.
  let closed = false
  const subscriptions = new Map(channels.map((c) => [c, 0]))
  let resetAt = 1
  const subscribed = (channel: string) => {
    if (closed) return
    subscriptions.set(channel, subscriptions.get(channel)! + 1)
    const all = Math.min(...subscriptions.values())
    if (all > resetAt) {
      resetAt = all
      handlers.onReset('reconnected')
    }
  }
  const handles: SQL.ListenSubscription[] = []
  const close = async () => {
    if (closed) return
    closed = true
    await Promise.allSettled(handles.map((h) => h.unlisten()))
    if (sql !== source) await sql.close()
  }
  try {
    for (const channel of channels) {
      const onNotice = (payload: string) => {
        if (closed) return
        if (payload === RESET_PAYLOAD) handlers.onReset('notice')
        else handlers.onChange(channel, payload)
      }
      handles.push(await sql.listen(channel, onNotice, () => subscribed(channel)))
    }
  } catch (err) {
    await close()
    throw err
  }
  return { close }
}
