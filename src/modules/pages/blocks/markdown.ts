// The text block's Markdown subset: paragraphs (a blank line between), line breaks (a single newline),
// **bold**, *italic*, `code`, [label](url) with http, https, mailto or tel, and "- " bullet lists. Anything
// else stays literal text. Every piece of source text goes through escapeHtml as it is emitted, so markup in
// the source can only ever appear as text; the only tags are the ones this file writes.
// Classes: b-text-link (links), b-text-list (bullet lists).
import { esc, safeUrl, TEXT_LINK_SCHEMES } from './fields'
import type { FieldIssue } from './types'

/** `[label](url)` at the start of a string; no nested brackets, no spaces or parentheses in the URL. */
const LINK = /^\[([^[\]\n]+)\]\(([^()\s]+)\)/
const ANY_LINK = /\[[^[\]\n]+\]\(([^)\s]*)\)/g
const CODE_SPAN = /`[^`\n]+`/g

/** The index of the `mark` closing an emphasis opened just before `from`, or -1. */
function closing(src: string, from: number, mark: '*' | '**'): number {
  for (let j = from; j < src.length; j++) {
    if (src.startsWith('**', j)) {
      if (mark === '**') return j
      j++ // a bold marker inside italic text is the bold's, not the italic's end
    } else if (mark === '*' && src[j] === '*') return j
  }
  return -1
}

function inline(src: string, inLink = false): string {
  let out = ''
  let plain = ''
  const emit = (html: string) => {
    out += esc(plain) + html
    plain = ''
  }
  let i = 0
  while (i < src.length) {
    const c = src[i]
    if (c === '`') {
      const end = src.indexOf('`', i + 1)
      if (end > i + 1) {
        emit(`<code>${esc(src.slice(i + 1, end))}</code>`)
        i = end + 1
        continue
      }
    } else if (c === '[' && !inLink) {
      const m = LINK.exec(src.slice(i))
      const href = m && safeUrl(m[2], TEXT_LINK_SCHEMES)
      if (m && href) {
        emit(`<a class="b-text-link" href="${esc(href)}">${inline(m[1]!, true)}</a>`)
        i += m[0].length
        continue
      }
    } else if (c === '*') {
      const mark = src.startsWith('**', i) ? '**' : '*'
      const start = i + mark.length
      const end = closing(src, start, mark)
      const body = end > start ? src.slice(start, end) : ''
      // "2 * 3 * 4" is arithmetic, not emphasis: the marked text may not start or end with a space.
      if (body && !/^\s|\s$/.test(body)) {
        const tag = mark === '**' ? 'strong' : 'em'
        emit(`<${tag}>${inline(body, inLink)}</${tag}>`)
        i = end + mark.length
        continue
      }
      plain += mark
      i = start
      continue
    }
    plain += c
    i++
  }
  emit('')
  return out
}

const BULLET = /^- /

/** The HTML of `source`; empty source gives an empty string. */
export function renderMarkdown(source: string): string {
  const lines = source.replace(/\r\n?/g, '\n').split('\n')
  let html = ''
  let paragraph: string[] = []
  let list: string[] = []
  const close = () => {
    if (paragraph.length) html += `<p>${paragraph.map((l) => inline(l)).join('<br>')}</p>`
    if (list.length) html += `<ul class="b-text-list">${list.map((l) => `<li>${inline(l)}</li>`).join('')}</ul>`
    paragraph = []
    list = []
  }
  for (const raw of lines) {
    const line = raw.trimEnd()
    if (!line.trim()) {
      close()
    } else if (BULLET.test(line)) {
      if (paragraph.length) close()
      list.push(line.slice(2).trim())
    } else {
      if (list.length) close()
      paragraph.push(line.trim())
    }
  }
  close()
  return html
}

/** One issue per link whose URL the renderer would not link (it would show the Markdown as typed). */
export function markdownLinkIssues(path: string, source: string): FieldIssue[] {
  const issues: FieldIssue[] = []
  for (const m of source.replace(CODE_SPAN, '').matchAll(ANY_LINK)) {
    if (!LINK.test(m[0]) || !safeUrl(m[1], TEXT_LINK_SCHEMES)) {
      issues.push({
        path,
        message:
          `The link to "${m[1]!.slice(0, 80)}" would show as plain text: links start with http:, https:, mailto: or tel: and hold no spaces or ` +
          `parentheses`,
      })
    }
  }
  return issues
}
