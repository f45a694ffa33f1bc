// `lnk admin rotate-key`: a new secret, the old one kept for a grace period.
import { rotateApiKey } from '../../modules/api-keys'
import { type AdminCommand, wholeNumber, withRuntime } from './shared'

export const rotateKey: AdminCommand = {
  name: 'rotate-key',
  usage: 'ID [--grace-hours N] [--json]',
  summary: 'New secret (printed once); the old one works for N hours (default 24; 0 stops it at once).',
  details: `Gives the key a new secret, printed once. The old secret keeps working for N hours (default 24, at
most 720); 0 stops it at once. With --json prints the key object with the new secret in "key".`,
  options: { 'grace-hours': { type: 'string' }, json: { type: 'boolean' } },
  positionals: 1,
  run: (c) =>
    withRuntime(c, async (rt) => {
      const { values } = c
      const grace = values['grace-hours'] === undefined ? undefined : wholeNumber('grace-hours', values['grace-hours'], 0, 720)
      const key = await rotateApiKey(rt.modules.apiKeys.ctx, null, c.positionals[0]!, grace)
      c.out(
        values.json === true
          ? JSON.stringify(key)
          : `Rotated ${key.id}. New key (shown once):\n\n  ${key.key}\n\nThe old secret works for ${key.graceHoursRemaining} more hour(s).`,
      )
      return 0
    }),
}
