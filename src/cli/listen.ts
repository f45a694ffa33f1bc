// `lnk listen`: forwards a workspace's events to a developer's machine through an outbound long poll. The
// flags and the process (signals, terminal, real fetch and timers) live here; the work is listen-client.ts.
import { hostname } from 'node:os'
import type { Command, Options } from './command'
import { DEFAULT_BASE_URL, listenSettings } from './listen-args'
import { printSecret, runListener } from './listen-client'
import type { Sleep } from './listen-forward'
import { createReporter } from './listen-output'

const HELP = `Usage: lnk listen --api-key K --forward-to URL [options]

Opens a forwarding session on an lnk server and POSTs each of the workspace's events to URL on this
machine, one at a time and in order, with the exact body and both signatures (Standard Webhooks and
x-service-signature). Every connection is outbound: nothing needs to reach this machine.

Options:
  --api-key K          API key with webhooks:write (opens the session) and webhooks:read; or LNK_API_KEY
  --forward-to URL     Where events go: a port (3000 = http://localhost:3000/), host:port[/path] or a URL
  --events a,b         Only these events (names, area.* or *); default every event
  --base-url U         The server's origin, as LNK_BASE_URL (default ${DEFAULT_BASE_URL}); /v1 is added
  -H, --header "K: V"  An extra header on every forwarded request (repeatable)
  --skip-verify        Accept a self-signed certificate from an https forward target
  --print-secret       Print the signing secret and exit
  --format text|json   Output lines as text (default) or as one JSON object each

The signing secret belongs to the API key: the same for every session and restart, until the key is
rotated. Answers of the app are shown, never acted on: redirects are not followed, errors are not retried.
A refused connection is tried again after 1, 2 and 4 s. ^C ends the session and exits 0.
Exit codes: 0 ended by ^C or SIGTERM, 1 the key was refused or the server will not serve the session,
2 usage.`

const options: Options = {
  'api-key': { type: 'string' },
  'forward-to': { type: 'string' },
  events: { type: 'string' },
  'base-url': { type: 'string' },
  header: { type: 'string', short: 'H', multiple: true },
  'skip-verify': { type: 'boolean' },
  'print-secret': { type: 'boolean' },
  format: { type: 'string' },
}

const sleep: Sleep = (ms, signal) =>
  new Promise((settle) => {
    if (signal.aborted) return settle()
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      settle()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })

const colorOn = (stream: NodeJS.WriteStream) => stream.isTTY === true && !process.env.NO_COLOR && process.env.TERM !== 'dumb'

export const listen: Command = {
  help: HELP,
  options,
  positionals: 0,
  async run({ values }, out) {
    const settings = listenSettings(values, process.env)
    const err = (line: string) => process.stderr.write(line + '\n')
    const deps = {
      fetch: (url: string, init: RequestInit) => fetch(url, init),
      sleep,
      now: Date.now,
      deviceName: hostname().slice(0, 100),
      report: createReporter({ format: settings.format, out, err, color: { out: colorOn(process.stdout), err: colorOn(process.stderr) }, now: Date.now }),
    }
    if (settings.printSecret) return printSecret(settings, { ...deps, out })
    const stop = new AbortController()
    const onSignal = () => {
      // A second ^C while the session is being ended: leave at once (it expires by itself).
      if (stop.signal.aborted) process.exit(130)
      stop.abort()
    }
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
    try {
      return await runListener(settings, deps, stop.signal)
    } finally {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
    }
  },
}
