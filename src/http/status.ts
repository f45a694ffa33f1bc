// Which HTTP status each error code answers with: the only place statuses are decided. Validation is 400,
// not 422: the spec's retry rule reads any 4xx but 429 as final.
import type { ErrorCode } from '../platform/errors'

export const ERROR_STATUS: Record<ErrorCode, number> = {
  invalid_request: 400,
  validation_failed: 400,
  unsupported_version: 400,
  block_type_immutable: 400,
  unknown_block_type: 400,
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
  external_id_taken: 409,
  endpoint_paused: 409,
  conflict: 409,
  domain_taken: 409,
  domain_has_links: 409,
  tag_exists: 409,
  folder_not_empty: 409,
  session_expired: 410,
  payload_too_large: 413,
  rate_limited: 429,
  monthly_cap_exceeded: 429,
  verify_throttled: 429,
  internal_error: 500,
  unavailable: 503,
}

export const statusOf = (code: ErrorCode) => ERROR_STATUS[code]
