// `lnk admin resume-key`: a paused key works again.
import { resumeApiKey } from '../../modules/api-keys'
import { type AdminCommand, withRuntime } from './shared'

export const resumeKey: AdminCommand = {
  name: 'resume-key',
  usage: 'ID [--json]',
  summary: 'Resume a paused key.',
  details: 'Resumes a paused key.',
  options: { json: { type: 'boolean' } },
  positionals: 1,
  run: (c) =>
    withRuntime(c, async (rt) => {
      const key = await resumeApiKey(rt.modules.apiKeys.ctx, null, c.positionals[0]!)
      c.out(c.values.json === true ? JSON.stringify(key) : `Resumed ${key.id} (${key.keyPrefix}…).`)
      return 0
    }),
}
