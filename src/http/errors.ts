// The one error type of lnk and the table of its stable codes. Codes never change once published;
// messages are for people and may. Statuses follow the contract (validation is 400, not 422: the
// spec's retry rule reads any 4xx but 429 as final).
export const ERROR_STATUS = {
  invalid_request: 400,
  validation_failed: 400,
  unsupported_version: 400,
  block_type_immutable: 400,
  qr_page_too_large: 400,
  unauthorized: 401,
  forbidden: 403,
  ip_not_allowed: 403,
  outside_schedule: 403,
  key_paused: 403,
  out_of_scope: 403,
  plan_limit_reached: 403,
  not_found: 404,
  method_not_allowed: 405,
  slug_taken: 409,
  endpoint_paused: 409,
  conflict: 409,
  session_expired: 410,
  payload_too_large: 413,
  rate_limited: 429,
  monthly_cap_exceeded: 429,
  internal_error: 500,
  unavailable: 503,
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

export interface ValidationIssue {
  path: string
  message: string
}

export class AppError extends Error {
  readonly status: number
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    /** Extra response headers, e.g. Retry-After or Allow. */
    readonly headers?: Record<string, string>,
  ) {
    super(message)
    this.name = 'AppError'
    this.status = ERROR_STATUS[code]
  }
}

/** A JSON pointer from a schema validator (`/links/0/slug`) as the dotted path issues name (`links.0.slug`). */
export const pointerToPath = (pointer: string) => pointer.replace(/^\//, '').replace(/\//g, '.')

export const notFound = (what: string) => new AppError('not_found', `${what} not found`)

export const validationFailed = (issues: ValidationIssue[], message?: string) =>
  new AppError('validation_failed', message ?? issues.map((i) => `${i.path || 'body'}: ${i.message}`).join('; '), { issues })

/** Validation problems of a body, collected so a person sees every one at once. */
export class Issues {
  list: ValidationIssue[] = []
  add(path: string, message: string) {
    this.list.push({ path, message })
  }
  throwIfAny() {
    if (this.list.length) throw new AppError('validation_failed', this.list.map((i) => `${i.path}: ${i.message}`).join('; '), { location: 'body', issues: this.list })
  }
}
