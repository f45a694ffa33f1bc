// The page tree as pure data: ids for a template's sections, the flat reading order, where an appended
// block goes, and a whole re-arrangement checked so that no block is lost or placed twice.
import type { Issues } from '../../platform/errors'
import { newId } from '../../platform/random'
import { LAYOUT_WIDTHS, type BareSections, type SectionLayout, type TreeBlock, type TreeSection } from './tree'

export function sectionsWithIds(sections: BareSections): TreeSection[] {
  return sections.map((s) => ({
    id: newId('sec'),
    layout: s.layout,
    columns: s.columns.map((c) => ({
      id: newId('col'),
      width: c.width,
      blocks: c.blocks.map((b) => ({ id: newId('blk'), type: b.type, fields: structuredClone(b.fields) })),
    })),
  }))
}

export function withoutIds(tree: TreeSection[]): BareSections {
  return tree.map((s) => ({
    layout: s.layout,
    columns: s.columns.map((c) => ({ width: c.width, blocks: c.blocks.map((b) => ({ type: b.type, fields: b.fields })) })),
  }))
}

const emptySection = (layout: SectionLayout, id = newId('sec')): TreeSection => ({
  id,
  layout,
  columns: LAYOUT_WIDTHS[layout].map((width) => ({ id: newId('col'), width, blocks: [] })),
})

/** Blocks in reading order: sections top to bottom, columns left to right, blocks top to bottom. */
export function readingOrder(tree: TreeSection[]) {
  let index = 0
  return tree.flatMap((s) =>
    s.columns.flatMap((c) =>
      c.blocks.map((b, position) => ({ id: b.id, type: b.type, fields: b.fields, index: index++, sectionId: s.id, columnId: c.id, position })),
    ),
  )
}

/**
 * Puts `block` where the append asked: a column, a section's last column, or the last column of the page.
 * An empty page first gets one full-width section (spec 4.4 rule 1).
 */
export function placeBlock(tree: TreeSection[], block: TreeBlock, at: { sectionId?: string; columnId?: string; position?: number }, issues: Issues) {
  if (tree.length === 0 && at.sectionId === undefined && at.columnId === undefined) tree.push(emptySection('full'))
  const section = at.sectionId === undefined ? undefined : tree.find((s) => s.id === at.sectionId)
  if (at.sectionId !== undefined && !section)
    return issues.add('sectionId', `${at.sectionId} is not a section of this page; its sections: ${tree.map((s) => s.id).join(', ') || 'none'}`)
  const columns = section ? section.columns : tree.flatMap((s) => s.columns)
  const column = at.columnId === undefined ? columns[columns.length - 1] : columns.find((c) => c.id === at.columnId)
  if (!column)
    return issues.add(
      'columnId',
      `${at.columnId} is not a column of ${section ? `section ${section.id}` : 'this page'}; its columns: ${columns.map((c) => c.id).join(', ') || 'none'}`,
    )
  const position = at.position ?? column.blocks.length
  if (position > column.blocks.length)
    return issues.add('position', `at most ${column.blocks.length} in column ${column.id} (it holds ${column.blocks.length} blocks)`)
  column.blocks.splice(position, 0, block)
}

/** The arrangement PATCH /bridge-pages/{id} asks for, built from the current tree's blocks. */
export function layoutSections(tree: TreeSection[], layout: { id?: string; layout: SectionLayout; columns: string[][] }[], issues: Issues): TreeSection[] {
  const blocks = new Map(tree.flatMap((s) => s.columns.flatMap((c) => c.blocks)).map((b) => [b.id, b]))
  const sections = new Map(tree.map((s) => [s.id, s]))
  const placed = new Set<string>()
  const out: TreeSection[] = []
  layout.forEach((wanted, i) => {
    const path = `layout.${i}`
    const widths = LAYOUT_WIDTHS[wanted.layout]
    if (wanted.id !== undefined && !sections.has(wanted.id))
      issues.add(`${path}.id`, `${wanted.id} is not a section of this page; leave id out for a new section`)
    if (wanted.id !== undefined && out.some((s) => s.id === wanted.id)) issues.add(`${path}.id`, `section ${wanted.id} is listed twice`)
    if (wanted.columns.length !== widths.length)
      issues.add(`${path}.columns`, `layout ${wanted.layout} has ${widths.length} column${widths.length === 1 ? '' : 's'}; ${wanted.columns.length} given`)
    const kept = wanted.id === undefined ? undefined : sections.get(wanted.id)
    const section: TreeSection = {
      id: kept?.id ?? newId('sec'),
      layout: wanted.layout,
      columns: widths.map((width, c) => ({
        // Columns keep their ids where the section had one at that place.
        id: kept?.columns[c]?.id ?? newId('col'),
        width,
        blocks: (wanted.columns[c] ?? []).flatMap((id, b) => {
          const block = blocks.get(id)
          if (!block) issues.add(`${path}.columns.${c}.${b}`, `${id} is not a block of this page`)
          else if (placed.has(id)) issues.add(`${path}.columns.${c}.${b}`, `block ${id} is placed twice`)
          else {
            placed.add(id)
            return [block]
          }
          return []
        }),
      })),
    }
    out.push(section)
  })
  const missing = [...blocks.keys()].filter((id) => !placed.has(id))
  if (missing.length)
    issues.add(
      'layout',
      `every block of the page must be placed; missing: ${missing.join(', ')} (delete a block with DELETE /bridge-pages/{pageId}/blocks/{blockId})`,
    )
  return out
}
