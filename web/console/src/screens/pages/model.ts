// Bridge pages, blocks, block types and templates as the /v1 API answers them (docs/pages.md).

export interface BridgePage {
  id: string
  title: string
  slug: string
  domain: string
  /** The public address: <scheme>://<domain>/p/<slug>. */
  url: string
  isTest: boolean
  version: number
  templateSlug: string | null
  blockCount: number
  views: number
  buttonClicks: number
  createdAt: string
  updatedAt: string
}

export interface Block {
  id: string
  type: string
  fields: Record<string, unknown>
  index: number
  sectionId: string
  columnId: string
  position: number
  clicks: number
}

/** A JSON Schema as GET /v1/bridge-pages/block-types answers it (TypeBox's output): only what the forms read. */
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

export interface BlockType {
  type: string
  title: string
  description: string
  schema: Schema
  defaults: Record<string, unknown>
}

export interface Template {
  slug: string
  name: string
  description: string
  category: string
  tags: string[]
  blockCount: number
}
