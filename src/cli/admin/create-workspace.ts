// `lnk admin create-workspace`: another workspace for an existing user.
import { createWorkspace as createWorkspaceFor } from '../../modules/identity'
import { type AdminCommand, required, withRuntime } from './shared'

export const createWorkspace: AdminCommand = {
  name: 'create-workspace',
  usage: '--name N --owner EMAIL [--json]',
  summary: 'Create another workspace owned by an existing user.',
  details: `Creates a workspace (slug derived from N) owned by the existing user EMAIL. Keys of that user act in it
by sending X-Workspace-Id: <id or slug>. With --json prints the workspace object.`,
  options: { name: { type: 'string' }, owner: { type: 'string' }, json: { type: 'boolean' } },
  positionals: 0,
  run: (c) =>
    withRuntime(c, async (rt) => {
      const ws = await createWorkspaceFor(rt.modules.identity.ctx, { name: required(c.values, 'name'), ownerEmail: required(c.values, 'owner') })
      c.out(c.values.json === true ? JSON.stringify(ws) : `Created workspace "${ws.name}" (${ws.id}, slug ${ws.slug}).`)
      return 0
    }),
}
