'use strict'
// A connection is a server URL and an API key (lnk_live_… or lnk_test_…). GET /v1/me accepts any valid key,
// so it checks both without needing a particular permission.
const { apiBase, dataOf } = require('./api')

const test = async (z, bundle) => dataOf(await z.request({ url: `${apiBase(bundle)}/me` }))

module.exports = {
  type: 'custom',
  fields: [
    {
      key: 'baseUrl',
      label: 'Server URL',
      type: 'string',
      required: true,
      helpText: 'Where your lnk answers its API, e.g. `https://lnk.example.com` (without `/v1`).',
    },
    {
      key: 'apiKey',
      label: 'API key',
      type: 'password',
      required: true,
      helpText: 'A key with the `automations:read` and `automations:write` permissions. A test key (`lnk_test_…`) receives test events only.',
    },
  ],
  test,
  connectionLabel: (z, bundle) => `${bundle.inputData.workspace.name} (${bundle.inputData.apiKey.mode})`,
}
