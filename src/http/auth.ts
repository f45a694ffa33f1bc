// The permission macro every authenticated route declares. Who the caller is, and whether its credential
// grants what the route needs, is the identity module's to say (identity/auth.ts): it hands this layer an
// Authenticator, so the kernel knows no area.
import { Elysia } from 'elysia'
import { idempotentMacro, type IdempotencyDeps, type IdempotentCaller } from './idempotency'

/** What the macro asks of the area that authenticates. */
export interface Authenticator<Caller, Permission extends string> {
  /** Distinguishes runtimes in one process; the plugin is deduplicated by it. */
  instanceId: string
  /**
   * The caller of `request`, holding `needed` ('authenticated': any valid credential will do); throws the
   * refusal. Headers for the answer (rate limits) go on `headers`.
   */
  authenticate(request: Request, needed: Permission | 'authenticated', headers: Record<string, unknown>): Promise<Caller>
  /** The refusal of a route reached without a caller (the transform stage did not run). */
  unauthenticated(): Error
}

/**
 * X-Workspace-Id as the OpenAPI document states it (openapi.ts publishes these bounds): a workspace id or
 * slug, 1 to 128 characters. Ids are ws_ and 20 characters, slugs at most 48; 128 leaves room and still
 * keeps an absurd value out of the lookup.
 */
export const WORKSPACE_HEADER = { name: 'X-Workspace-Id', minLength: 1, maxLength: 128 } as const

// RFC 7235 credentials: the scheme (case-insensitive), then the token. Only HTTP's own whitespace (SP and HTAB,
// RFC 7230 OWS) may separate them or surround the value. JavaScript's \s would also take U+00A0, vertical tab,
// form feed and the Unicode spaces, letting a credential with a stray character pass as if it were exact.
const BEARER = /^[ \t]*Bearer[ \t]+([^ \t]+)[ \t]*$/i

/** The token of an `Authorization: Bearer <token>` value, or null when the value is not exactly that. */
export function bearerCredential(header: string): string | null {
  return BEARER.exec(header)?.[1] ?? null
}

const callers = new WeakMap<Request, unknown>()

/**
 * `permission: 'links:read'` (or 'authenticated' where any valid key will do) on a route authenticates the
 * caller, enforces every key restriction and the permission, and hands the route `caller`. It also marks
 * the operation as bearer-secured in OpenAPI. The checks run in the transform stage, before the body and
 * query are validated, so a request without a valid key learns nothing but 401.
 */
export function authPlugin<Caller extends IdempotentCaller, Permission extends string>(idempotency: IdempotencyDeps, auth: Authenticator<Caller, Permission>) {
  return new Elysia({ name: 'lnk.auth', seed: auth.instanceId }).macro({
    idempotent: idempotentMacro(idempotency, (request) => callers.get(request) as Caller | undefined),
    permission: (needed: Permission | 'authenticated') => ({
      detail: { security: [{ bearer: [] }], 'x-permission': needed } as Record<string, unknown>,
      async transform({ request, set }) {
        callers.set(request, await auth.authenticate(request, needed, set.headers))
      },
      resolve({ request }) {
        if (!callers.has(request)) throw auth.unauthenticated()
        return { caller: callers.get(request) as Caller }
      },
    }),
  })
}
