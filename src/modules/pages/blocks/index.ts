// The block catalogue: every block type in the order an editor offers them, lookup by name, validation
// (the schema first, then the type's own checks) and the defaults a new block starts from.
import { Value } from '@sinclair/typebox/value'
import { button } from './button'
import { contact } from './contact'
import { heading } from './heading'
import { image } from './image'
import { profile } from './profile'
import { divider, spacer } from './separators'
import { socialLinks } from './social-links'
import { text } from './text'
import type { BlockType, FieldIssue } from './types'
import { video } from './video'

export type { BlockType, FieldIssue, RenderContext } from './types'

export const BLOCK_TYPES: BlockType[] = [profile, heading, text, button, socialLinks, image, video, divider, spacer, contact]

const BY_NAME = new Map(BLOCK_TYPES.map((b) => [b.type, b]))

export const blockType = (type: string): BlockType | undefined => BY_NAME.get(type)

/** Every problem with `fields` for `type`: schema issues (one per path), else the type's own checks. */
export function validateFields(type: BlockType, fields: unknown): FieldIssue[] {
  const issues: FieldIssue[] = []
  const seen = new Set<string>()
  for (const e of Value.Errors(type.schema, fields)) {
    const path = e.path.replace(/^\//, '')
    // A union reports each branch it tried; the first message for a path is the readable one.
    if (seen.has(path)) continue
    seen.add(path)
    issues.push({ path, message: e.message })
  }
  if (issues.length) return issues
  return type.check?.(fields as Record<string, unknown>) ?? []
}

/**
 * The type's defaults overlaid with `partial` (shallow: a list such as social links' items is replaced
 * whole). `id` and `type` inside fields are ignored (spec 4.4 rule 1), and null means "the default" as in a
 * JSON Merge Patch. Answers a fresh object: the defaults are never shared.
 */
export function mergeDefaults(type: BlockType, partial: Record<string, unknown> = {}): Record<string, unknown> {
  const merged: Record<string, unknown> = structuredClone(type.defaults)
  for (const [key, value] of Object.entries(partial)) {
    if (key === 'id' || key === 'type' || value === undefined || value === null) continue
    merged[key] = structuredClone(value)
  }
  return merged
}
