// `lnk admin revoke-key`: the end of a key.
import { revokeApiKey } from '../../modules/api-keys'
import { type AdminCommand, str, withRuntime } from './shared'

export const revokeKey: AdminCommand = {
  name: 'revoke-key',
  usage: 'ID [--reason R] [--json]',
  summary: 'Revoke a key for good.',
  details: 'Revokes the key: every request with it is refused with 401 from now on. This cannot be undone.',
  options: { reason: { type: 'string' }, json: { type: 'boolean' } },
  positionals: 1,
  run: (c) =>
    withRuntime(c, async (rt) => {
      const key = await revokeApiKey(rt.modules.apiKeys.ctx, null, c.positionals[0]!, str(c.values.reason))
      c.out(c.values.json === true ? JSON.stringify(key) : `Revoked ${key.id} (${key.keyPrefix}…) at ${key.revokedAt}.`)
      return 0
    }),
}
