// The links list's folder sidebar: all links, then each folder with its count. Choosing one keeps the other
// filters and the order, since the folder is one more filter in the address.
import type { Async } from '../../ui/async'
import { href } from '../../router'
import type { Folder } from '../folders/list'
import { addressOf, type Filters } from './list-query'

export function FolderNav({ folders, filters }: { folders: Async<Folder[]>; filters: Filters }) {
  const to = (folderId: string) => href('/links', addressOf({ ...filters, folderId }))
  return (
    <nav class="folder-nav" aria-label="Folders">
      <h2>Folders</h2>
      <ul>
        <li>
          <a href={to('')} aria-current={filters.folderId ? undefined : 'page'}>
            All links
          </a>
        </li>
        {(folders.data ?? []).map((folder) => (
          <li key={folder.id}>
            <a href={to(folder.id)} aria-current={filters.folderId === folder.id ? 'page' : undefined}>
              <span>{folder.name}</span>
              <span class="small-text">
                <span class="visually-hidden">, links: </span>
                {folder.linkCount.toLocaleString()}
              </span>
            </a>
          </li>
        ))}
      </ul>
      {folders.status === 'error' && <p class="small-text">The folders could not be loaded.</p>}
    </nav>
  )
}
