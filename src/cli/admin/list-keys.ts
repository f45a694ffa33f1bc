// `lnk admin list-keys`: keys of one workspace or of all, never their secrets.
import { listKeys as listApiKeys } from '../../modules/identity'
import { type AdminCommand, withRuntime } from './shared'

export const listKeys: AdminCommand = {
  name: 'list-keys',
  usage: '[--workspace ID_OR_SLUG] [--json]',
  summary: 'List keys (never their secrets).',
  details: `Lists API keys, newest last: id, prefix, mode, name, state and permissions. Secrets are never shown.
With --json prints an array of API key objects (the fields of GET /v1/api-keys).`,
  options: { workspace: { type: 'string' }, json: { type: 'boolean' } },
  positionals: 0,
  run: (c) =>
    withRuntime(c, async (rt) => {
      const { values, out } = c
      const keys = await listApiKeys(rt.modules.identity.ctx, typeof values.workspace === 'string' ? values.workspace : undefined)
      if (values.json === true) out(JSON.stringify(keys))
      else if (!keys.length) out('No API keys.')
      else {
        for (const k of keys) {
          const state = k.revokedAt ? 'revoked' : k.pausedAt ? 'paused' : k.expiresAt && Date.parse(k.expiresAt) <= Date.now() ? 'expired' : 'active'
          out(`${k.id}  ${k.keyPrefix}…  ${k.mode}  ${state.padEnd(7)}  ${k.name}  [${k.permissions.join(',')}]`)
        }
      }
      return 0
    }),
}
