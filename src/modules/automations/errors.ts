// Every way the automations area refuses, by name. Codes and details are published; messages may change.
import { AppError, notFound } from '../../platform/errors'
import { MAX_SUBSCRIPTIONS } from './model'

export const subscriptionNotFound = (id: string) => notFound(`Automation subscription ${id}`)

export const tooManySubscriptions = () =>
  new AppError(
    'conflict',
    `This workspace has ${MAX_SUBSCRIPTIONS} active automation subscriptions, the most it may hold; unsubscribe unused ones (DELETE ` +
      `/zapier/subscriptions/{id}) first`,
    {
      limit: MAX_SUBSCRIPTIONS,
    },
  )
