'use strict'
// The lnk integration for Zapier (a CLI app: `zapier push` uploads this folder). It only talks to lnk's
// public API: /v1/me, /v1/zapier/subscriptions and /v1/zapier/samples.
const packageJson = require('./package.json')
const authentication = require('./authentication')
const { addApiKey, raiseApiError } = require('./api')
const { triggers } = require('./triggers')

module.exports = {
  version: packageJson.version,
  // The zapier-platform-core this folder depends on, so the two never disagree.
  platformVersion: packageJson.dependencies['zapier-platform-core'],
  // Every call goes through z.request, which Zapier logs already; patching Node's http module would only log
  // other clients' calls, and there are none.
  flags: { skipHttpPatch: true },
  authentication,
  beforeRequest: [addApiKey],
  afterResponse: [raiseApiError],
  triggers,
}
