// The response envelope of spec 2.1 and its TypeBox schemas, so every route documents what it answers.
import { t, type TSchema } from 'elysia'
import { ERROR_CODES } from '../platform/errors'

export interface Pagination {
  page: number
  perPage: number
  total: number
  totalPages: number
}

export const ok = <T>(data: T) => ({ success: true as const, data })

export const okPage = <T>(data: T[], pagination: Pagination) => ({ success: true as const, data, meta: { pagination } })

export function errorBody(code: string, message: string, details?: Record<string, unknown>) {
  return { success: false as const, error: details ? { code, message, details } : { code, message } }
}

export const ErrorEnvelope = t.Object(
  {
    success: t.Literal(false),
    error: t.Object(
      {
        code: t.Union(
          ERROR_CODES.map((c) => t.Literal(c)),
          { description: 'Stable, snake_case error code' },
        ),
        message: t.String({ description: 'For people; may change' }),
        details: t.Optional(t.Record(t.String(), t.Unknown())),
      },
      { additionalProperties: false },
    ),
  },
  // Explicit additionalProperties: Elysia otherwise adds it while compiling validators, so the document
  // would depend on which routes ran first.
  { title: 'Error', additionalProperties: false },
)

export const Envelope = <T extends TSchema>(data: T) => t.Object({ success: t.Literal(true), data })

export const PaginationSchema = t.Object({
  page: t.Integer({ minimum: 1 }),
  perPage: t.Integer({ minimum: 1 }),
  total: t.Integer({ minimum: 0 }),
  totalPages: t.Integer({ minimum: 0 }),
})

export const PageEnvelope = <T extends TSchema>(item: T) =>
  t.Object({ success: t.Literal(true), data: t.Array(item), meta: t.Object({ pagination: PaginationSchema }) })
