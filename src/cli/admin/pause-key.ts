// `lnk admin pause-key`: a key refused with 403 key_paused until resume-key.
import { pauseApiKey } from '../../modules/api-keys'
import { type AdminCommand, str, withRuntime } from './shared'

export const pauseKey: AdminCommand = {
  name: 'pause-key',
  usage: 'ID [--reason R] [--json]',
  summary: 'Pause a key (403 key_paused) until it is resumed.',
  details: "Pauses the key: requests with it get 403 key_paused until 'lnk admin resume-key ID'.",
  options: { reason: { type: 'string' }, json: { type: 'boolean' } },
  positionals: 1,
  run: (c) =>
    withRuntime(c, async (rt) => {
      const key = await pauseApiKey(rt.modules.apiKeys.ctx, null, c.positionals[0]!, str(c.values.reason))
      c.out(c.values.json === true ? JSON.stringify(key) : `Paused ${key.id} (${key.keyPrefix}…) at ${key.pausedAt}.`)
      return 0
    }),
}
