import { Elysia } from 'elysia'
import { Envelope, ErrorEnvelope, ok } from '../../http/envelope'
import type { HttpKit } from './auth'
import type { IdentityCtx } from './service'
import { Me } from './model'
import { whoAmI } from './service'

export function identityRoutes(ctx: IdentityCtx, http: HttpKit) {
  return new Elysia({ name: 'lnk.identity', seed: http.instanceId, tags: ['Identity'] })
    .use(http.auth)
    .get('/me', async ({ caller }) => ok(await whoAmI(ctx, caller)), {
      permission: 'authenticated',
      response: { 200: Envelope(Me), 401: ErrorEnvelope, 403: ErrorEnvelope, 429: ErrorEnvelope },
      detail: {
        summary: 'Who am I',
        description:
          "The key's user and workspace, the key itself (never its secret) and this month's usage. Any valid key may call it; use it to validate a key.",
      },
    })
}
