// Dated API versions (Service-Version: YYYY-MM-DD). docs/versions.md describes each one.
import { AppError } from '../platform/errors'

/** Oldest first; the last one is current. */
export const API_VERSIONS = ['2026-11-22'] as const
export const CURRENT_VERSION = API_VERSIONS[API_VERSIONS.length - 1]!

/**
 * The version a request runs under: the pinned one, or the current one when the header is absent. A header
 * sent empty is refused like any value outside the list: the OpenAPI document states an enum of versions,
 * and an empty value is not one of them (it usually means a client's variable was left unset).
 */
export function resolveVersion(header: string | null): string {
  if (header === null) return CURRENT_VERSION
  const value = header.trim()
  if ((API_VERSIONS as readonly string[]).includes(value)) return value
  const hint =
    value === ''
      ? 'is empty: send a version or leave the header out'
      : /^\d{4}-\d{2}-\d{2}$/.test(value)
        ? 'is not a version of this API'
        : 'is not a date in the form YYYY-MM-DD'
  throw new AppError('unsupported_version', `Service-Version "${value.slice(0, 40)}" ${hint}; available: ${API_VERSIONS.join(', ')}`, {
    available: [...API_VERSIONS],
  })
}
