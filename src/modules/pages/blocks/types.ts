// What every block type of the catalogue provides: a JSON Schema of its fields (TypeBox, so it lands in the
// OpenAPI document and validates input), defaults that validate alone, checks the schema cannot say, and
// a renderer to escaped, script-free HTML.
import type { TSchema } from 'elysia'

/** One problem with a block's fields: `path` is inside fields (e.g. `items/2/url`). */
export interface FieldIssue {
  path: string
  message: string
}

/** What a renderer may ask of the page it is drawn on. */
export interface RenderContext {
  /** The block being drawn. */
  blockId: string
  /**
   * The href for an outbound URL of this block: `/_/b/{blockId}` (with `?i=<index>` for the index-th URL of a
   * list) so the click is counted before the visitor is sent on. Renderers never put a raw outbound URL in
   * an href of a button.
   */
  trackedHref(index?: number): string
  /** The short URL of a workspace link (buttons with linkId), or null when the link is gone or inactive. */
  linkUrl(linkId: string): string | null
  /**
   * True for the one block that carries the page's <h1> (the first profile block); the page title is the
   * <h1> when there is none. Everything else uses h2/h3.
   */
  primaryHeading: boolean
}

export interface BlockType<F extends Record<string, unknown> = Record<string, unknown>> {
  /** snake_case name, e.g. `social_links`. */
  type: string
  title: string
  description: string
  /** A TypeBox object schema with additionalProperties false and a description on every field. */
  schema: TSchema
  /** Validates alone (tested). */
  defaults: F
  /** Rules the schema cannot say (URL schemes, one of linkId/url, …). Called only on schema-valid fields. */
  check?(fields: F): FieldIssue[]
  /** Escaped HTML, no script, no inline event handlers, no style attribute (the CSP forbids inline styles on elements). */
  render(fields: F, ctx: RenderContext): string
  /** The workspace links the fields name (the service checks each belongs to the page's workspace). */
  linkIds?(fields: F): string[]
  /** The outbound URL of a tracked href (`/_/b/{blockId}?i=index`), or null when there is none. */
  outboundUrl?(fields: F, index: number): string | null
}
