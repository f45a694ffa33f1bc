// The deliver job's reads by id run on the driver with their own row decoding (repo.ts rowById): they must
// answer exactly what drizzle's select answers for the same row, JSON, booleans and nulls included.
import { expect, test } from 'bun:test'
import { webhooksEnv } from './_webhooks'

test('deliveryById and endpointById answer the rows as drizzle decodes them', async () => {
  const env = await webhooksEnv()
  try {
    const ep = await env.createEndpoint({
      url: 'http://127.0.0.1:9/hook',
      events: ['link.created'],
      customHeaders: [{ name: 'x-team', value: 'growth-team-42' }],
      filters: { match: 'any', events: null, rules: [{ field: 'data.slug', op: 'exists' }] },
      transform: { kind: 'template', template: { text: '{{ data.slug }}' } },
    })
    await env.emit('link.created')
    await env.rt.worker.runDue()
    const repo = env.rt.modules.webhooks.ctx.webhooks
    const [listed] = await repo.listDeliveries({ endpointId: ep.id, limit: 1 })
    expect(listed).toBeDefined()
    expect(await repo.deliveryById(listed!.id)).toEqual(listed!)
    expect(await repo.endpointById(ep.id)).toEqual((await repo.findEndpoint(env.workspaceId, ep.id))!)
    expect(await repo.deliveryById('dlv_missing')).toBeUndefined()
    expect(await repo.endpointById('whe_missing')).toBeUndefined()
  } finally {
    await env.cleanup()
  }
})
