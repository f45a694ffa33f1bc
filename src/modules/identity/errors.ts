// Every way the identity area refuses (bootstrap and the admin CLI's workspace, member and key commands; the
// sandbox of test keys), by name. Codes, messages and details are published: change them only as the
// contract allows (messages may change, codes and details not).
import { AppError, invalid, notFound } from '../../platform/errors'

export const userNotFound = (email: string) => notFound(`user ${email}`)

export const workspaceNotFound = (ref: string) => notFound(`workspace "${ref}"`)

/** X-Workspace-Id sent empty, or longer than any workspace id or slug can be: a malformed request, not a stranger's workspace. */
export const badWorkspaceHeader = (message: string) => invalid('headers', [{ path: 'X-Workspace-Id', message }])

/** Workspace slugs come from their names, so two names can ask for one slug. */
export const workspaceSlugTaken = (slug: string) => new AppError('conflict', `a workspace with slug "${slug}" already exists`)

export const workspaceHasNoOwner = (slug: string) => new AppError('conflict', `workspace "${slug}" has no user to own the key; run admin bootstrap`)

/** A name that makes no slug (only punctuation, say). */
export const workspaceNameUnusable = () => invalid('body', [{ path: 'workspace', message: 'the workspace name needs at least one letter or digit' }])

export const notAnEmail = (value: string) => invalid('body', [{ path: 'email', message: `"${value}" is not an email address` }])

/** `reason`: what is wrong with the list of permissions (permissions.ts says). */
export const badPermissions = (reason: string) => invalid('body', [{ path: 'permissions', message: reason }])

export const badKeyName = () => invalid('body', [{ path: 'name', message: 'must be 1-100 characters' }])

/** A test key asked a list for more than its sandbox (`asked`: live or all): refused, not cut down to test records. */
export const testKeySandboxed = (records: string, asked: string) =>
  new AppError('forbidden', `A test key sees only test ${records}; leave mode out or send mode=test (mode=${asked} needs a live key)`, { mode: asked, keyMode: 'test' })
