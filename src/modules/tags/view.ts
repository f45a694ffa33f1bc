// The Tag as answered and as events carry it, from its row.
import type { TagEventData, TagView } from './model'
import type { TagRow } from './port'

const iso = (ms: number) => new Date(ms).toISOString()

export const tagData = (row: TagRow): TagEventData => ({
  id: row.id,
  name: row.name,
  color: row.color,
  createdAt: iso(row.createdAt),
  updatedAt: iso(row.updatedAt),
})

export const toTag = (row: TagRow, linkCount: number): TagView => ({ ...tagData(row), linkCount })
