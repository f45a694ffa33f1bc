// GET /v1/openapi.json (OpenAPI 3.1, generated from the routes' schemas) and the /v1/docs page.
import { openapi } from '@elysiajs/openapi'
import { API_VERSIONS, CURRENT_VERSION } from '../../http/version'

export const OPENAPI_TAGS = [
  { name: 'Identity', description: 'Who a key belongs to and what it may do' },
  { name: 'Operations', description: 'Health, readiness and metrics, outside /v1' },
]

export function openapiDocs() {
  return openapi({
    path: '/v1/docs',
    specPath: '/v1/openapi.json',
    documentation: {
      info: {
        title: 'lnk API',
        version: CURRENT_VERSION,
        description: `Self-hosted link shortening. Every /v1 response is an envelope {success, data | error, meta}. Send Service-Version (one of ${API_VERSIONS.join(', ')}) to pin a dated version.`,
      },
      tags: OPENAPI_TAGS,
      security: [{ bearer: [] }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'An API key: lnk_live_… or lnk_test_…' },
        },
      },
    },
  })
}
