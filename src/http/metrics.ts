// Prometheus text exposition for /metrics: requests by route and status, a latency histogram, and gauges
// that other parts register (queue depth, buffers).
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

const label = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')

export class Metrics {
  private requests = new Map<string, number>()
  private histograms = new Map<string, { buckets: number[]; sum: number; count: number }>()
  private gauges = new Map<string, { help: string; type: 'gauge' | 'counter'; read: () => number | Promise<number> }>()

  private labels = new Map<string, string>()

  observe(method: string, route: string, status: number, seconds: number) {
    // Routes are patterns, so these label strings are few: build each once.
    const id = `${method} ${route}`
    let hkey = this.labels.get(id)
    if (hkey === undefined) this.labels.set(id, (hkey = `method="${label(method)}",route="${label(route)}"`))
    const key = `${hkey},status="${status}"`
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1)
    let h = this.histograms.get(hkey)
    if (!h) this.histograms.set(hkey, (h = { buckets: BUCKETS.map(() => 0), sum: 0, count: 0 }))
    for (let i = 0; i < BUCKETS.length; i++) if (seconds <= BUCKETS[i]!) h.buckets[i]!++
    h.sum += seconds
    h.count++
  }

  gauge(name: string, help: string, read: () => number | Promise<number>) {
    this.gauges.set(name, { help, type: 'gauge', read })
  }

  /** A value that only grows, read when rendered (its owner keeps it). */
  counter(name: string, help: string, read: () => number) {
    this.gauges.set(name, { help, type: 'counter', read })
  }

  async render(): Promise<string> {
    const out: string[] = []
    out.push('# HELP lnk_http_requests_total HTTP requests answered, by route pattern and status.')
    out.push('# TYPE lnk_http_requests_total counter')
    for (const [k, v] of this.requests) out.push(`lnk_http_requests_total{${k}} ${v}`)
    out.push('# HELP lnk_http_request_duration_seconds Time to answer an HTTP request.')
    out.push('# TYPE lnk_http_request_duration_seconds histogram')
    for (const [k, h] of this.histograms) {
      BUCKETS.forEach((b, i) => out.push(`lnk_http_request_duration_seconds_bucket{${k},le="${b}"} ${h.buckets[i]}`))
      out.push(`lnk_http_request_duration_seconds_bucket{${k},le="+Inf"} ${h.count}`)
      out.push(`lnk_http_request_duration_seconds_sum{${k}} ${h.sum}`)
      out.push(`lnk_http_request_duration_seconds_count{${k}} ${h.count}`)
    }
    for (const [name, g] of this.gauges) {
      out.push(`# HELP ${name} ${g.help}`, `# TYPE ${name} ${g.type}`, `${name} ${await g.read()}`)
    }
    return out.join('\n') + '\n'
  }
}
