// Bridge pages, blocks, block types and templates as the /v1 API answers them (docs/pages.md), and the part
// of JSON Schema the block forms read.
import type { Data } from '../../api-types'

/** A page; `url` is its public address, <scheme>://<domain>/p/<slug>. */
export type BridgePage = Data<'/bridge-pages/{id}', 'get'>
export type Block = Data<'/bridge-pages/{pageId}/blocks', 'get'>[number]
/** A block type: its `schema` is a JSON Schema (TypeBox's output), which the document leaves open. */
export type BlockType = Data<'/bridge-pages/block-types', 'get'>[number]
export type Template = Data<'/templates', 'get'>[number]

/**
 * The JSON Schema vocabulary the block forms read (only that). Not an API shape: the document types a block
 * type's `schema` as any object, and the editor hands it to the forms as this.
 */
export interface Schema {
  type?: string
  description?: string
  title?: string
  const?: unknown
  anyOf?: Schema[]
  properties?: Record<string, Schema>
  required?: string[]
  items?: Schema
  minItems?: number
  maxItems?: number
  minLength?: number
  maxLength?: number
  minimum?: number
  maximum?: number
}
