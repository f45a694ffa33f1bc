// Every way the tags area refuses, by name. Codes and details are published: change them only as the contract
// allows (messages may change, codes and details not).
import { AppError, invalid, notFound } from '../../platform/errors'

export const tagNotFound = (id: string) => notFound(`Tag ${id}`)

export const tagExists = (name: string) =>
  new AppError('tag_exists', `The workspace already has a tag named "${name}"; rename or delete that one first`, { name })

export const blankTagName = () => invalid('body', [{ path: 'name', message: 'must hold a character other than spaces' }])

/** A tag outside the key's scope filters, or a change that would reach links outside them. */
export const tagOutOfScope = (why: string) => new AppError('out_of_scope', `${why}; use a key whose scope covers it`)

/** Tags are shared by a workspace's live and test links: a rename, recolour or deletion needs a live key. */
export const tagChangeNeedsLiveKey = () =>
  new AppError('forbidden', 'A test key cannot change or delete tags: they are shared with live links. Use a live key', { keyMode: 'test' })
