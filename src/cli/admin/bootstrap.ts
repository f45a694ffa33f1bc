// `lnk admin bootstrap`: the first user, workspace and key of an instance.
import { bootstrap as bootstrapAccount } from '../../modules/identity'
import { type AdminCommand, required, withRuntime } from './shared'

export const bootstrap: AdminCommand = {
  name: 'bootstrap',
  usage: '--email E [--name N] --workspace W [--json]',
  summary: 'Create a user, a workspace and a live key with every permission. The key is printed once.',
  details: `Creates the user (or reuses one with that email), a workspace named W (slug derived from it), an owner
membership, and a live API key with every permission (*). The key is shown once: store it now.
With --json prints {"user":{…},"workspace":{…},"apiKey":{"id","key","keyPrefix","mode"}}.`,
  options: { email: { type: 'string' }, name: { type: 'string' }, workspace: { type: 'string' }, json: { type: 'boolean' } },
  positionals: 0,
  run: (c) =>
    withRuntime(c, async (rt) => {
      const { values, out } = c
      const result = await bootstrapAccount(rt.modules.identity.ctx, {
        email: required(values, 'email'),
        workspace: required(values, 'workspace'),
        name: typeof values.name === 'string' ? values.name : undefined,
      })
      if (values.json === true) out(JSON.stringify(result))
      else {
        out(
          `Created user ${result.user.email} (${result.user.id}) and workspace "${result.workspace.name}" (${result.workspace.id}, slug ` +
            `${result.workspace.slug}).`,
        )
        out(`API key (shown once, store it now):\n\n  ${result.apiKey.key}\n`)
        out(`Try it: curl -H "Authorization: Bearer ${result.apiKey.key}" ${c.config.baseUrl}/v1/me`)
      }
      return 0
    }),
}
