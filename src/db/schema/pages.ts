// Bridge pages: a page holds sections, a section columns, a column blocks, each ordered by position. Saved
// templates keep a page's layout and blocks without ids; page_stats counts views and button clicks per day.
import { bool, index, int, json, primaryKey, table, text, time, uniqueIndex } from '../columns'
import { workspaces } from './identity'

/** The theme as stored (its shape is src/modules/pages/tree.ts Theme). */
export type StoredTheme = Record<string, unknown>

/** A layout without ids: a saved template's sections, columns and blocks. */
export type StoredSections = { layout: string; columns: { width: number; blocks: { type: string; fields: Record<string, unknown> }[] }[] }[]

export const bridgePages = table(
  'bridge_pages',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    isTest: bool('is_test').notNull(),
    domain: text('domain').notNull(),
    slug: text('slug').notNull(),
    title: text('title').notNull(),
    description: text('description'),
    lang: text('lang').notNull(),
    theme: json<StoredTheme>('theme').notNull(),
    ogImageUrl: text('og_image_url'),
    templateSlug: text('template_slug'),
    savedTemplateId: text('saved_template_id'),
    /** Bumped by every change to the page or its blocks: ETags and optimistic concurrency read it. */
    version: int('version').notNull(),
    createdAt: time('created_at').notNull(),
    updatedAt: time('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('bridge_pages_domain_slug_unique').on(t.domain, t.slug),
    index('bridge_pages_workspace_created_idx').on(t.workspaceId, t.createdAt, t.id),
  ],
)

export const pageSections = table(
  'page_sections',
  {
    id: text('id').primaryKey(),
    pageId: text('page_id')
      .notNull()
      .references(() => bridgePages.id, { onDelete: 'cascade' }),
    position: int('position').notNull(),
    layout: text('layout').notNull(),
  },
  (t) => [index('page_sections_page_idx').on(t.pageId, t.position)],
)

export const pageColumns = table(
  'page_columns',
  {
    id: text('id').primaryKey(),
    pageId: text('page_id')
      .notNull()
      .references(() => bridgePages.id, { onDelete: 'cascade' }),
    sectionId: text('section_id')
      .notNull()
      .references(() => pageSections.id, { onDelete: 'cascade' }),
    position: int('position').notNull(),
    width: int('width').notNull(),
  },
  (t) => [index('page_columns_page_idx').on(t.pageId, t.sectionId, t.position)],
)

export const pageBlocks = table(
  'page_blocks',
  {
    id: text('id').primaryKey(),
    pageId: text('page_id')
      .notNull()
      .references(() => bridgePages.id, { onDelete: 'cascade' }),
    columnId: text('column_id')
      .notNull()
      .references(() => pageColumns.id, { onDelete: 'cascade' }),
    position: int('position').notNull(),
    type: text('type').notNull(),
    fields: json<Record<string, unknown>>('fields').notNull(),
  },
  (t) => [index('page_blocks_page_idx').on(t.pageId, t.columnId, t.position)],
)

export const savedTemplates = table(
  'saved_templates',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    description: text('description'),
    /** The page it was saved from (it may since have been deleted). */
    sourcePageId: text('source_page_id'),
    title: text('title').notNull(),
    lang: text('lang').notNull(),
    theme: json<StoredTheme>('theme').notNull(),
    sections: json<StoredSections>('sections').notNull(),
    createdAt: time('created_at').notNull(),
  },
  (t) => [index('saved_templates_workspace_idx').on(t.workspaceId, t.createdAt)],
)

/** Views (block_id '') and button clicks per page, block and UTC day; bots are never counted. */
export const pageStats = table(
  'page_stats',
  {
    pageId: text('page_id')
      .notNull()
      .references(() => bridgePages.id, { onDelete: 'cascade' }),
    blockId: text('block_id').notNull(),
    day: time('day').notNull(),
    count: int('count').notNull(),
  },
  (t) => [primaryKey({ columns: [t.pageId, t.blockId, t.day] })],
)
