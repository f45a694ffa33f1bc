// `lnk admin create-key`: another key for a workspace's owner.
import { createKey as createApiKey } from '../../modules/identity'
import { UsageError } from '../command'
import { type AdminCommand, required, withRuntime } from './shared'

export const createKey: AdminCommand = {
  name: 'create-key',
  usage: '--workspace ID_OR_SLUG --name N [--mode live|test] [--permissions a,b] [--json]',
  summary: "Create another key for the workspace's owner. Permissions default to *.",
  details: `Creates an API key for the workspace's owner. --mode test makes a sandbox key (lnk_test_…).
--permissions is a comma-separated list (links:read, links:write, analytics:read, domains:read,
domains:write, webhooks:read, webhooks:write, api_keys:read, api_keys:write, pages:read, pages:write,
automations:read, automations:write) or * for all (the default).
With --json prints {"id","key","keyPrefix","mode","permissions"}.`,
  options: { workspace: { type: 'string' }, name: { type: 'string' }, mode: { type: 'string' }, permissions: { type: 'string' }, json: { type: 'boolean' } },
  positionals: 0,
  run: (c) =>
    withRuntime(c, async (rt) => {
      const { values, out } = c
      const mode = values.mode === undefined ? 'live' : values.mode
      if (mode !== 'live' && mode !== 'test') throw new UsageError('--mode must be live or test')
      const key = await createApiKey(rt.modules.identity.ctx, {
        workspace: required(values, 'workspace'),
        name: required(values, 'name'),
        mode,
        permissions: typeof values.permissions === 'string' ? values.permissions : undefined,
      })
      out(
        values.json === true
          ? JSON.stringify(key)
          : `Created ${key.mode} key ${key.id} with ${key.permissions.join(', ')}.\nKey (shown once):\n\n  ${key.key}\n`,
      )
      return 0
    }),
}
