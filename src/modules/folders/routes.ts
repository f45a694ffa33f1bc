// /v1/folders: thin routes over the service. Reads need links:read, changes links:write; test keys read only.
import { Elysia, t } from 'elysia'
import { Envelope, ErrorEnvelope, ok } from '../../http/envelope'
import type { HttpKit } from '../identity'
import { CreateFolderBody, DeleteFolderQuery, Folder, FolderDeleted, UpdateFolderBody } from './model'
import { createFolder, deleteFolder, type FoldersCtx, getFolder, listFolders, updateFolder } from './service'

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope, 429: ErrorEnvelope }
const Params = t.Object({ id: t.String({ maxLength: 128, description: 'fld_…' }) })
const SCOPE_NOTE = 'A key whose scopeFilters name folders sees only those (others are 404) and changes only those (others are 403 out_of_scope).'

export function folderRoutes(ctx: FoldersCtx, http: HttpKit) {
  return new Elysia({ name: 'lnk.folders', seed: http.instanceId, prefix: '/folders', tags: ['Folders'] })
    .use(http.auth)
    .get('/', async ({ caller }) => ok(await listFolders(ctx, caller)), {
      permission: 'links:read',
      response: { 200: Envelope(t.Array(Folder)), ...errors },
      detail: {
        summary: 'List folders',
        description: "Every folder of the workspace by name, with linkCount: the links of the key's mode in it, within its scope filters. " + SCOPE_NOTE,
      },
    })
    .post(
      '/',
      async ({ caller, body, set }) => {
        set.status = 201
        return ok(await createFolder(ctx, caller, body))
      },
      {
        permission: 'links:write',
        idempotent: true,
        body: CreateFolderBody,
        response: { 201: Envelope(Folder), ...errors },
        detail: {
          summary: 'Create a folder',
          description:
            'A live key only (a test key is 403 forbidden); a key whose scope filters name folders cannot create one (403 out_of_scope). ' +
            'Emits folder.created. Supports Idempotency-Key.',
        },
      },
    )
    .get('/:id', async ({ caller, params }) => ok(await getFolder(ctx, caller, params.id)), {
      permission: 'links:read',
      params: Params,
      response: { 200: Envelope(Folder), ...errors },
      detail: { summary: 'Get a folder', description: `With its linkCount. ${SCOPE_NOTE}` },
    })
    .patch('/:id', async ({ caller, params, body }) => ok(await updateFolder(ctx, caller, params.id, body)), {
      permission: 'links:write',
      params: Params,
      body: UpdateFolderBody,
      response: { 200: Envelope(Folder), ...errors },
      detail: {
        summary: 'Rename a folder or change its description',
        description: `Only the fields sent change; null clears the description. A live key only. Emits folder.updated. ${SCOPE_NOTE}`,
      },
    })
    .delete(
      '/:id',
      async ({ caller, params, query }) => ok(await deleteFolder(ctx, caller, params.id, { moveTo: query.moveTo, deleteLinks: query.deleteLinks === 'true' })),
      {
        permission: 'links:write',
        params: Params,
        query: DeleteFolderQuery,
        response: { 200: Envelope(FolderDeleted), ...errors },
        detail: {
          summary: 'Delete a folder',
          description:
            'A folder holding links (live or test) is refused with 409 folder_not_empty unless moveTo=<folder id> moves them (each with a ' +
            'link.updated event) or deleteLinks=true deletes them (each with a link.deleted event), in the same transaction as the deletion. ' +
            'Every link moved or deleted must be within the key’s scope filters (else 403 out_of_scope, nothing changed). A live key only. ' +
            `Emits folder.deleted. ${SCOPE_NOTE}`,
        },
      },
    )
}
