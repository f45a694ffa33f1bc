// What a custom domain may be, and its one spelling: lower case, IDNA (punycode) ASCII, no trailing dot.
// Pure: the domains area, link creation and the redirect path all compare hostnames in this form.
import { isIP } from 'node:net'
import { domainToASCII } from 'node:url'

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/

export type ParsedDomain = { hostname: string } | { problem: string }

export function parseDomain(input: string): ParsedDomain {
  const raw = input.trim()
  if (!raw) return { problem: 'must not be empty' }
  if (/[/?#@\s]/.test(raw) || raw.includes('://')) return { problem: 'must be a bare hostname such as go.example.com, without scheme, path or spaces' }
  if (raw.startsWith('[') || isIP(raw)) return { problem: 'must be a hostname, not an IP address' }
  if (/:\d*$/.test(raw)) return { problem: 'must not carry a port; short links are served on the standard ports' }
  const ascii = domainToASCII(raw.replace(/\.$/, '').toLowerCase())
  if (!ascii) return { problem: 'is not a valid internationalised domain name' }
  if (isIP(ascii)) return { problem: 'must be a hostname, not an IP address' }
  if (ascii.length > 253) return { problem: 'must be at most 253 characters once converted to ASCII' }
  const labels = ascii.split('.')
  if (labels.length < 2) return { problem: 'must have at least two labels, such as go.example.com or example.com' }
  if (!labels.every((l) => LABEL.test(l))) return { problem: 'each label must be 1-63 letters, digits or hyphens, not starting or ending with a hyphen' }
  if (/^\d+$/.test(labels.at(-1)!)) return { problem: 'must end in a top-level domain, not a number' }
  return { hostname: ascii }
}

/** The hostname in its one spelling, or null when `input` is no valid domain. */
export function toHostname(input: string): string | null {
  const parsed = parseDomain(input)
  return 'hostname' in parsed ? parsed.hostname : null
}

/** This service's own hostnames (ports aside): the shared pool of short domains and the API's host. */
export function serviceHostnames(config: { shortDomains: string[]; baseUrl: string }): Set<string> {
  return new Set([...config.shortDomains.map((hostPort) => new URL(`http://${hostPort}`).hostname), new URL(config.baseUrl).hostname])
}
