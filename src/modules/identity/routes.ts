import { Elysia } from 'elysia'
import { authPlugin } from '../../http/auth'
import { Envelope, ErrorEnvelope, ok } from '../../http/envelope'
import type { Runtime } from '../../runtime'
import { Me } from './model'
import { whoAmI } from './service'

export function identityRoutes(rt: Runtime) {
  return new Elysia({ name: 'lnk.identity', seed: rt.instanceId, tags: ['Identity'] })
    .use(authPlugin(rt))
    .get('/me', async ({ caller }) => ok(await whoAmI(rt, caller)), {
      permission: 'authenticated',
      response: { 200: Envelope(Me), 401: ErrorEnvelope, 403: ErrorEnvelope, 429: ErrorEnvelope },
      detail: {
        summary: 'Who am I',
        description: "The key's user and workspace, the key itself (never its secret) and this month's usage. Any valid key may call it; use it to validate a key.",
      },
    })
}
