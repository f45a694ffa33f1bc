// The one error type of lnk and its stable codes (contract section 2). Codes never change once published;
// messages are for people and may. This file knows nothing of HTTP: which status a code answers with is
// decided in one place, src/http/status.ts. Each area names its own refusals in its errors.ts, built from
// these pieces.
export const ERROR_CODES = [
  'invalid_request',
  'validation_failed',
  'unsupported_version',
  'block_type_immutable',
  'unknown_block_type',
  'qr_page_too_large',
  'unauthorized',
  'forbidden',
  'ip_not_allowed',
  'outside_schedule',
  'key_paused',
  'out_of_scope',
  'plan_limit_reached',
  'not_found',
  'method_not_allowed',
  'slug_taken',
  'external_id_taken',
  'endpoint_paused',
  'conflict',
  'domain_taken',
  'domain_has_links',
  'tag_exists',
  'folder_not_empty',
  'session_expired',
  'payload_too_large',
  'rate_limited',
  'monthly_cap_exceeded',
  'verify_throttled',
  'internal_error',
  'unavailable',
] as const

export type ErrorCode = (typeof ERROR_CODES)[number]

export interface ValidationIssue {
  path: string
  message: string
}

/** Where a validation problem is: the request body, its query, its path parameters or its headers. */
export type IssueLocation = 'body' | 'query' | 'params' | 'headers'

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    /** Headers the answer must carry, e.g. Retry-After or Allow. */
    readonly headers?: Record<string, string>,
  ) {
    super(message)
    this.name = 'AppError'
  }
}

/** A JSON pointer from a schema validator (`/links/0/slug`) as the dotted path issues name (`links.0.slug`). */
export const pointerToPath = (pointer: string) => pointer.replace(/^\//, '').replace(/\//g, '.')

export const notFound = (what: string) => new AppError('not_found', `${what} not found`)

/**
 * The one way to say `validation_failed`: every problem at once, each with its path, under
 * `details: {location, issues}`, and a message that lists them.
 */
export function invalid(location: IssueLocation, issues: ValidationIssue[], prefix = `Invalid ${location}`): AppError {
  const list = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ')
  return new AppError('validation_failed', `${prefix}: ${list}`, { location, issues })
}

/** Validation problems, collected so a person sees every one at once. */
export class Issues {
  list: ValidationIssue[] = []
  constructor(private readonly location: IssueLocation = 'body') {}
  add(path: string, message: string) {
    this.list.push({ path, message })
  }
  throwIfAny() {
    if (this.list.length) throw invalid(this.location, this.list)
  }
}
