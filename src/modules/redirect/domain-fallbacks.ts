// What a custom domain answers besides its links: its owner's URLs for `/`, unknown slugs and used-up links,
// with `{DOMAIN}` and `{ORIGINAL_PATH}` filled in. Pure. The URLs were checked as absolute http(s) when the
// owner set them, and only the two placeholders take anything from the request, each percent-encoded, so
// the visitor can never choose where they are sent.

/** The paths that stay the service's on a custom domain: the API, health and metrics, ACME and the domain
 * check (`/.well-known/…`), and the local proxy's (`/internal/…`). */
const SERVICE_PATH = /^\/(?:v1|healthz|readyz|metrics|\.well-known|internal)(?:\/|$)/

export const isServicePath = (path: string) => SERVICE_PATH.test(path)

// A URL parser escapes braces in a path (`/%7BORIGINAL_PATH%7D`), so a stored URL may carry either spelling.
const PLACEHOLDER = /(?:\{|%7[Bb])(DOMAIN|ORIGINAL_PATH)(?:\}|%7[Dd])/g

/** Percent-encoded as a URI component, except that `/` stays (a path keeps its shape). */
const encodePath = (value: string) => encodeURIComponent(value).replaceAll('%2F', '/')

/** The request path without its leading slash, decoded once so it is encoded exactly once. */
function originalPath(path: string): string {
  const rest = path.slice(1)
  try {
    return decodeURIComponent(rest)
  } catch {
    return rest
  }
}

/** `template` with `{DOMAIN}` → the hostname and `{ORIGINAL_PATH}` → `path` (raw, as requested) without its `/`. */
export function fillFallback(template: string, hostname: string, path: string): string {
  if (!template.includes('{') && !template.includes('%7')) return template
  return template.replace(PLACEHOLDER, (_, name: string) => encodePath(name === 'DOMAIN' ? hostname : originalPath(path)))
}
