// `lnk admin add-member`: a user (created if new) in a workspace, or a member's new role.
import { addMember as addMemberTo } from '../../modules/identity'
import { UsageError } from '../command'
import { type AdminCommand, required, withRuntime } from './shared'

export const addMember: AdminCommand = {
  name: 'add-member',
  usage: '--workspace ID_OR_SLUG --email E [--name N] [--role member|owner] [--json]',
  summary: 'Add a user (created if new) to a workspace; their keys can act in it with X-Workspace-Id.',
  details: `Adds the user E (created if there is none) to the workspace with the role (default member). Running it
again changes the role. With --json prints {"user","workspace","role"}.`,
  options: { workspace: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' }, role: { type: 'string' }, json: { type: 'boolean' } },
  positionals: 0,
  run: (c) =>
    withRuntime(c, async (rt) => {
      const { values, out } = c
      const role = values.role === undefined ? 'member' : values.role
      if (role !== 'member' && role !== 'owner') throw new UsageError('--role must be member or owner')
      const result = await addMemberTo(rt.modules.identity.ctx, {
        workspace: required(values, 'workspace'),
        email: required(values, 'email'),
        name: typeof values.name === 'string' ? values.name : undefined,
        role,
      })
      out(values.json === true ? JSON.stringify(result) : `${result.user.email} is now ${role} of "${result.workspace.name}" (${result.workspace.id}).`)
      return 0
    }),
}
