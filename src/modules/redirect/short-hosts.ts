// The hosts short links are served on (host or host:port, as in the Host header): the shared pool of
// LNK_SHORT_DOMAINS, and whatever is added while running (a workspace's domain once verified). The redirect
// handler asks it on every request, so a host added or removed counts from the next request on.
export class ShortHosts {
  private hosts = new Set<string>()

  constructor(hosts: Iterable<string> = []) {
    for (const host of hosts) this.add(host)
  }

  /** `host` lower-cased, as the handler reads it from the request. */
  has(host: string): boolean {
    return this.hosts.has(host)
  }

  add(host: string) {
    this.hosts.add(host.toLowerCase())
  }

  remove(host: string) {
    this.hosts.delete(host.toLowerCase())
  }
}
