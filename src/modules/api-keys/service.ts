// API key management through the API. A key can never create a key wider than itself, and a test key
// only makes test keys.
import type { Deps } from '../../context'
import type { Caller } from '../../http/auth'
import { AppError } from '../../http/errors'
import { newId } from '../../random'
import { generateKey, type KeyMode } from '../identity/keys'
import type { Grant } from '../identity/permissions'
import type { IdentityRepo } from '../identity/repo'
import { toApiKey } from '../identity/service'

export interface ApiKeysCtx extends Deps {
  identity: IdentityRepo
}

export async function listApiKeys(ctx: ApiKeysCtx, caller: Caller) {
  const now = ctx.clock.now()
  return (await ctx.identity.listKeys(caller.workspace.id)).map((k) => toApiKey(k, now))
}

/** Refuses any grant the caller does not hold itself. */
export function assertWithin(caller: Caller, wanted: readonly Grant[]) {
  const held = caller.key.permissions
  if (held.includes('*')) return
  const wider = wanted.filter((p) => p === '*' || !held.includes(p))
  if (wider.length) {
    throw new AppError('forbidden', `A key cannot grant permissions it does not hold: ${wider.join(', ')}`, { notHeld: wider })
  }
}

export async function createApiKey(ctx: ApiKeysCtx, caller: Caller, input: { name: string; mode?: KeyMode; permissions?: Grant[]; expiresAt?: string | null }) {
  const mode = input.mode ?? caller.mode
  if (caller.mode === 'test' && mode !== 'test') throw new AppError('forbidden', 'A test key can only create test keys')
  const permissions = input.permissions ?? (caller.key.permissions as Grant[])
  assertWithin(caller, permissions)
  const now = ctx.clock.now()
  let expiresAt: number | null = null
  if (input.expiresAt) {
    expiresAt = Date.parse(input.expiresAt)
    if (!Number.isFinite(expiresAt) || expiresAt <= now) {
      throw new AppError('validation_failed', 'expiresAt must be a timestamp in the future', { issues: [{ path: 'expiresAt', message: 'must be in the future' }] })
    }
  }
  const secret = generateKey(mode)
  const row = await ctx.identity.insertKey({
    id: newId('key'),
    workspaceId: caller.workspace.id,
    userId: caller.user.id,
    name: input.name.trim(),
    keyHash: secret.hash,
    keyPrefix: secret.prefix,
    mode,
    permissions: [...new Set(permissions)],
    allowedIps: [],
    expiresAt,
    createdAt: now,
  })
  return { ...toApiKey(row, now), key: secret.key }
}
