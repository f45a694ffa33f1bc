// The Zapier app of integrations/zapier as a test sees it (not a test file itself): the app definition loaded
// from its folder (CommonJS, as Zapier loads it), zapier-platform-core's own tester and command handler over
// it, and the bundles Zapier hands each operation.
import { createAppTester, version as coreVersion } from 'zapier-platform-core'

// Exported by core but absent from its type definitions.
const { createAppHandler } = require('zapier-platform-core') as { createAppHandler: (app: object) => (event: object) => Promise<{ results: unknown[] }> }

type Perform = (z: unknown, bundle: any) => unknown

export interface HookTrigger {
  key: string
  noun: string
  display: { label: string; description: string }
  operation: {
    type: string
    performSubscribe: Perform
    performUnsubscribe: Perform
    perform: Perform
    performList: Perform
    sample: Record<string, any>
  }
}

export interface ZapierApp {
  version: string
  platformVersion: string
  authentication: { type: string; fields: { key: string }[]; test: Perform; connectionLabel: Perform }
  triggers: Record<string, HookTrigger>
}

export const APP_DIR = new URL('../../integrations/zapier/', import.meta.url).pathname

// require(): the folder is a CommonJS package (no "type": "module"), exactly what `zapier push` uploads.
export const app: ZapierApp = require(APP_DIR)
export const appPackage: { version: string; dependencies: Record<string, string> } = require(`${APP_DIR}package.json`)
export { coreVersion }

/** The connection fields Zapier keeps for an account (authData). */
export interface Connection {
  baseUrl: string
  apiKey: string
}

const tester = createAppTester(app)

/** Runs one operation the way Zapier does: through core's handler, with middleware, checks and error mapping. */
export async function run<T = any>(operation: Perform, bundle: Record<string, unknown> & { authData: Connection }): Promise<T> {
  return (await tester(operation as (z: any, bundle: any) => unknown, bundle as any)) as T
}

/** core's schema validation of the whole definition (what `zapier validate` checks locally); [] when valid. */
export async function schemaErrors(): Promise<unknown[]> {
  return (await createAppHandler(app)({ command: 'validate' })).results
}

/** The bundle of a hook's perform: Zapier parses the JSON body into cleanedRequest and keeps the raw request. */
export function hookBundle(connection: Connection, received: { method: string; headers: Record<string, string>; body: string }, subscribeData: unknown) {
  return {
    authData: connection,
    subscribeData,
    cleanedRequest: JSON.parse(received.body),
    rawRequest: { method: received.method, querystring: '', headers: received.headers, content: received.body },
  }
}

export const triggerFor = (event: string): HookTrigger => {
  const trigger = app.triggers[event.replace(/\./g, '_')]
  if (!trigger) throw new Error(`the app has no trigger for ${event}`)
  return trigger
}
