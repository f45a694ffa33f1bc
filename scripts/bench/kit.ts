// What the benchmarks share: free loopback ports, readiness, CPU and memory of a process read from /proc,
// wrk's output read into numbers, and the synthetic clicks the ingestion runs hand to the click buffer.
import { readFileSync } from 'node:fs'
import type { ClickBuffer } from '../../src/modules/clicks/click-buffer'
import type { ClickRecord } from '../../src/modules/clicks/port'
import { sortableId } from '../../src/platform/random'

/** A desktop Chrome user agent: every visit with it is a counted click (not a bot, not a preview). */
export const CHROME_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'

export function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = s.port!
  s.stop(true)
  return port
}

export function procStatus(pid: number, field: string): number {
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0)
}

/** CPU seconds the process has used, all threads, user + system (/proc/<pid>/stat, in ticks of 10 ms). */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

export async function waitReady(url: string) {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    try {
      const r = await fetch(url, { redirect: 'manual' })
      if (r.status < 500) return
    } catch {
      /* not up yet */
    }
    await Bun.sleep(100)
  }
  throw new Error(`${url} did not come up`)
}

const ms = (v: string) => (v.endsWith('us') ? Number.parseFloat(v) / 1000 : v.endsWith('ms') ? Number.parseFloat(v) : Number.parseFloat(v) * 1000)

/** wrk --latency output: responses read, requests/s, p99 in ms, and non-3xx responses plus timeouts. */
export function parseWrk(out: string) {
  return {
    requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? 0),
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0),
    p99: ms(/\s99%\s+(\S+)/.exec(out)?.[1] ?? 'NaN'),
    bad: Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0) + Number(/Socket errors:.*timeout (\d+)/.exec(out)?.[1] ?? 0),
  }
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/**
 * Hands `count` clicks to the buffer as redirects would (a public address, a referrer, nothing announced
 * here: the buffer asks who listens), a thousand at a time, keeping at most 20,000 waiting: with as many
 * being written that stays under the buffer's cap of 50,000, so no click is kept as counts only and the
 * figure is what the writer sustains. Bounded: throws if the writer has not kept up within 10 minutes.
 */
export async function feedClicks(
  buffer: Pick<ClickBuffer, 'add' | 'size'>,
  count: number,
  click: { linkId: () => string; workspaceId: string; userAgent: (i: number) => string; rand: () => number },
) {
  const { rand } = click
  const deadline = Date.now() + 600_000
  for (let i = 0; i < count; ) {
    while (buffer.size > 20_000) {
      if (Date.now() > deadline) throw new Error('ingestion: the writer did not keep up within 10 minutes')
      await Bun.sleep(2)
    }
    for (let j = 0; j < 1000 && i < count; j++, i++) {
      const now = Date.now()
      const record: ClickRecord = {
        id: sortableId('clk', now),
        linkId: click.linkId(),
        workspaceId: click.workspaceId,
        clickedAt: now,
        ip: `${1 + Math.floor(rand() * 223)}.${Math.floor(rand() * 256)}.${Math.floor(rand() * 256)}.${Math.floor(rand() * 256)}`,
        userAgent: click.userAgent(i),
        referrer: 'https://news.ycombinator.com/item?id=1',
        referrerHost: 'news.ycombinator.com',
        ruleId: null,
        variantId: null,
        destinationUrl: 'https://example.com/',
        newAddress: null,
        isBot: false,
        announce: false,
      }
      buffer.add(record)
    }
    await Bun.sleep(0)
  }
}
