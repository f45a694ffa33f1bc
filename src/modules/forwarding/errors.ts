// Every way the forwarding area refuses, by name. Codes and details are published; messages may change.
import { AppError, notFound } from '../../platform/errors'
import { IDLE_TIMEOUT_SECONDS } from './model'

export const sessionNotFound = (id: string) => notFound(`Forwarding session ${id}`)

export const sessionExpired = (id: string) =>
  new AppError(
    'session_expired',
    `Forwarding session ${id} ended ${IDLE_TIMEOUT_SECONDS} s after its last poll; open a new one (POST /webhooks/cli/sessions; the signing secret ` +
      `stays the same)`,
    { id },
  )
