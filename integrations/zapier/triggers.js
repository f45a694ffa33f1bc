'use strict'
// One instant trigger per event. Zapier calls performSubscribe when a Zap is turned on (lnk then POSTs every
// such event to bundle.targetUrl, signed and retried like a webhook), performUnsubscribe when it is turned
// off, perform with each request lnk sent, and performList when the user tests the trigger in the editor.
const { apiBase, dataOf } = require('./api')
const { EVENTS, triggerKey, sampleEnvelope } = require('./events')

const makeTrigger = (definition) => {
  const { event, noun, label, description } = definition

  // What lnk answers (id, secret, …) is kept by Zapier as bundle.subscribeData for the unsubscribe.
  const performSubscribe = async (z, bundle) =>
    dataOf(
      await z.request({
        url: `${apiBase(bundle)}/zapier/subscriptions`,
        method: 'POST',
        body: { event, hookUrl: bundle.targetUrl },
      }),
    )

  // lnk answers 204 also for a subscription already gone (a 410 from Zapier removes it on lnk's side).
  const performUnsubscribe = async (z, bundle) => {
    const id = bundle.subscribeData.id
    await z.request({ url: `${apiBase(bundle)}/zapier/subscriptions/${encodeURIComponent(id)}`, method: 'DELETE' })
    return { id, unsubscribed: true }
  }

  // The body is the event envelope; its `id` (evt_…) is what Zapier dedupes on.
  const perform = (z, bundle) => [bundle.cleanedRequest]

  // The account's latest real events of this type, or one synthetic envelope (`sample: true`) when there are none.
  const performList = async (z, bundle) => dataOf(await z.request({ url: `${apiBase(bundle)}/zapier/samples`, params: { event } }))

  return {
    key: triggerKey(event),
    noun,
    display: { label, description },
    operation: {
      type: 'hook',
      performSubscribe,
      performUnsubscribe,
      perform,
      performList,
      sample: sampleEnvelope(definition),
    },
  }
}

const triggers = Object.fromEntries(EVENTS.map((definition) => [triggerKey(definition.event), makeTrigger(definition)]))

module.exports = { triggers }
