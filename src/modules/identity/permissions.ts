// Permission names of the contract (section 3). `*` grants all of them.
export const PERMISSIONS = [
  'links:read',
  'links:write',
  'analytics:read',
  'domains:read',
  'domains:write',
  'webhooks:read',
  'webhooks:write',
  'api_keys:read',
  'api_keys:write',
  'pages:read',
  'pages:write',
  'automations:read',
  'automations:write',
] as const

export type Permission = (typeof PERMISSIONS)[number]
export type Grant = Permission | '*'

export const isGrant = (value: string): value is Grant => value === '*' || (PERMISSIONS as readonly string[]).includes(value)

export const hasPermission = (granted: readonly string[], needed: Permission) => granted.includes('*') || granted.includes(needed)

/** Parses a comma-separated list (CLI) or array; throws with the first unknown name. */
export function parseGrants(input: string | readonly string[]): Grant[] {
  const names = (typeof input === 'string' ? input.split(',') : [...input]).map((s) => s.trim()).filter(Boolean)
  if (!names.length) throw new Error('at least one permission is required')
  for (const n of names) if (!isGrant(n)) throw new Error(`unknown permission "${n}"; known: *, ${PERMISSIONS.join(', ')}`)
  return [...new Set(names)] as Grant[]
}
