// Every way the folders area refuses, by name. Codes and details are published; messages may change.
import { AppError, notFound } from '../../platform/errors'

export const folderNotFound = (id: string) => notFound(`Folder ${id}`)

export const folderNotEmpty = (id: string, links: number) =>
  new AppError(
    'folder_not_empty',
    `Folder ${id} still holds ${links} link${links === 1 ? '' : 's'} (live and test); pass moveTo=<folder id> to move them, or deleteLinks=true to delete them`,
    { id, links },
  )

/** Folders are shared by live and test links: a sandboxed key reads them and files test links in them. */
export const testKeyChangesFolder = () =>
  new AppError('forbidden', 'A test key cannot create, change or delete folders; use a live key (test keys may read folders and file test links in them)')

export const folderOutOfScope = (id: string) =>
  new AppError('out_of_scope', `Folder ${id} is outside the key's scope filters (folders); use a key whose scope covers it`, { id })

/** A key limited to some folders cannot make another: the new folder would be outside its own scope. */
export const scopedKeyCreatesFolder = () =>
  new AppError('out_of_scope', "This key's scope filters name folders; a new folder would be outside them. Use a key without a folder scope")

export const linksOutOfScope = (id: string, links: number) =>
  new AppError(
    'out_of_scope',
    `Folder ${id} holds ${links} link${links === 1 ? '' : 's'} outside the key's scope filters (domains/tags); moving or deleting them needs a key ` +
      `whose scope covers them`,
    { id, links },
  )
