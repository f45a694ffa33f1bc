// The set-based rewrite of a tag on every link of a workspace that carries it (a rename or a removal): one
// UPDATE of links (their tags JSON, search text and updatedAt) and one of link_tags, never a round trip per
// link, so 100,000 links take well under the contract's 5 seconds. The JSON functions are each engine's own
// (json_each/json_group_array against jsonb_array_elements/jsonb_agg) and so is instr/strpos: the statements
// differ in dialect here, hence the branches on the engine's name.
import { and, count, eq, inArray, sql, type SQL } from 'drizzle-orm'
import { rows, type Builder, type Engine, type Steps } from '../../db/engine'

const NL = '\n'
const DOTTED_I = '\u0130'

/** Code points, as SQL's length() and substr() count them. */
const codePoints = (s: string) => [...s].length

/**
 * The links' search text is the lower-cased `slug, title, destination, ...tags` one per line (links/fields.ts,
 * searchTextOf), lower-cased in JavaScript. Only the tag lines change, so the prefix is kept as stored and the
 * tag's line is replaced in the tail. JavaScript's toLowerCase keeps every code point one code point except
 * U+0130 (İ, which becomes two), so the prefix's length is the columns' lengths plus their İs.
 */
function searchTextRewrite(engine: Engine, oldName: string, newName: string | null): SQL {
  const dotted = (col: SQL) => sql`(length(${col}) - length(replace(${col}, cast(${DOTTED_I} as text), '')))`
  const title = sql`coalesce(links.title, '')`
  const prefix = sql`(length(links.slug) + length(${title}) + length(links.destination_url) + 2 + ${dotted(title)} + ${dotted(sql`links.destination_url`)})`
  const tail = sql`substr(links.search_text, ${prefix} + 1)`
  const needle = `${NL}${oldName.toLowerCase()}${NL}`
  const find =
    engine.name === 'sqlite'
      ? sql`instr(${tail} || cast(${NL} as text), cast(${needle} as text))`
      : sql`strpos(${tail} || cast(${NL} as text), cast(${needle} as text))`
  const line = newName === null ? sql`''` : sql`cast(${`${NL}${newName.toLowerCase()}`} as text)`
  const after = sql`substr(${tail}, ${find} + cast(${codePoints(oldName.toLowerCase()) + 1} as integer))`
  return sql`substr(links.search_text, 1, ${prefix}) || (case when ${find} = 0 then ${tail} else substr(${tail}, 1, ${find} - 1) || ${line} || ${after} end)`
}

/** The links' tags JSON with `oldName` replaced by `newName` (kept once when a link carried both), or dropped. */
function tagsRewrite(engine: Engine, oldName: string, newName: string | null): SQL {
  if (engine.name === 'sqlite') {
    if (newName === null) return sql`(select json_group_array(value order by key) from json_each(links.tags) where value <> ${oldName})`
    return sql`(select json_group_array(case when value = ${oldName} then ${newName} else value end order by key) from json_each(links.tags)
      where not (value = ${oldName} and exists (select 1 from json_each(links.tags) where value = ${newName})))`
  }
  // jsonb's text is `["a", "b"]`: with ", " added at both ends every element sits between two ", ", and an
  // element's text holds no unescaped quote, so `, "old", ` matches the element itself and nothing inside
  // another. Text replacement and `-` cost a fraction of taking the array apart per link.
  if (newName === null) return sql`links.tags - ${oldName}::text`
  const delimited = sql`', ' || substr(links.tags::text, 2, length(links.tags::text) - 2) || ', '`
  const token = (name: string) => sql`', ' || to_jsonb(${name}::text)::text || ', '`
  const replaced = sql`replace(${delimited}, ${token(oldName)}, ${token(newName)})`
  return sql`case when links.tags @> jsonb_build_array(${newName}::text) then links.tags - ${oldName}::text
    else ('[' || substr(${replaced}, 3, length(${replaced}) - 4) || ']')::jsonb end`
}

/**
 * Renames `oldName` to `newName` (null: removes it) on every link of the workspace carrying it, inside the
 * caller's transaction; answers how many links changed.
 */
export function* rewritingTag(engine: Engine, tx: Builder, workspaceId: string, oldName: string, newName: string | null, now: number): Steps<number> {
  const { links, linkTags } = engine.t
  // Driven by link_tags' (tag, link_id) index, each link then found by its key.
  const carrying = and(
    eq(links.workspaceId, workspaceId),
    inArray(links.id, tx.select({ id: linkTags.linkId }).from(linkTags).where(eq(linkTags.tag, oldName))),
  )
  const [counted] = yield* rows(tx.select({ n: count() }).from(links).where(carrying))
  const n = counted?.n ?? 0
  if (n === 0) return 0
  yield* rows(
    tx
      .update(links)
      .set({ tags: tagsRewrite(engine, oldName, newName), searchText: searchTextRewrite(engine, oldName, newName), updatedAt: now })
      .where(carrying),
  )
  const ofWorkspace = sql`exists (select 1 from links l where l.id = ${linkTags.linkId} and l.workspace_id = ${workspaceId})`
  if (newName === null) {
    yield* rows(tx.delete(linkTags).where(and(eq(linkTags.tag, oldName), ofWorkspace)))
    return n
  }
  // A link carrying both names keeps one row of the new name.
  const hasNew = sql`exists (select 1 from link_tags t2 where t2.link_id = ${linkTags.linkId} and t2.tag = ${newName})`
  yield* rows(tx.delete(linkTags).where(and(eq(linkTags.tag, oldName), ofWorkspace, hasNew)))
  yield* rows(
    tx
      .update(linkTags)
      .set({ tag: newName })
      .where(and(eq(linkTags.tag, oldName), ofWorkspace)),
  )
  return n
}
