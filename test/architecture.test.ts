// The layering rules of docs/architecture.md, checked over the source text so a change that breaks one fails
// here rather than in review.
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = join(import.meta.dir, '..')

/** Every TypeScript file under src/, as a path relative to the repository root. */
const SOURCES = [...new Bun.Glob('src/**/*.ts').scanSync({ cwd: ROOT })].sort()

/** db/ owns the engine; a repo file (repo*.ts) owns its area's statements. */
const inDb = (file: string) => file.startsWith('src/db/')
const isRepo = (file: string) => /^repo[^/]*\.ts$/.test(file.split('/').at(-1)!)

/**
 * The source cut into code (strings blanked, comments dropped) and the texts of its string and template
 * literals. A hand-rolled scan, enough for this code base: quotes inside comments and regex literals must not
 * start a string.
 */
function scan(source: string): { code: string; strings: string[] } {
  let code = ''
  const strings: string[] = []
  let i = 0
  let depth = 0
  let lastSignificant = ''
  // Template literals open while code inside their ${…} runs: the text so far, and the brace depth at which
  // the template resumes. A substitution reads as x in the text.
  const templates: { text: string; depth: number }[] = []
  const readString = (quote: string) => {
    let text = ''
    for (i++; i < source.length && source[i] !== quote; i++) {
      if (source[i] === '\\') text += source[i++]
      text += source[i]
    }
    i++
    strings.push(text)
    code += quote + quote
  }
  /** Reads template text from i up to the closing ` or the next ${. */
  const readTemplate = (text: string) => {
    while (i < source.length) {
      const c = source[i]!
      if (c === '\\') {
        text += c + source[i + 1]
        i += 2
      } else if (c === '`') {
        i++
        strings.push(text)
        code += '`'
        return
      } else if (c === '$' && source[i + 1] === '{') {
        i += 2
        code += '${'
        templates.push({ text: text + 'x', depth })
        depth++
        return
      } else {
        text += c
        i++
      }
    }
  }
  while (i < source.length) {
    const c = source[i]!
    const next = source[i + 1]
    if (c === '/' && next === '/') {
      while (i < source.length && source[i] !== '\n') i++
    } else if (c === '/' && next === '*') {
      const end = source.indexOf('*/', i + 2)
      i = end < 0 ? source.length : end + 2
    } else if (
      c === '/' &&
      (lastSignificant === '' || /[(,=:[!&|?{};+\-*%<>~^]$/.test(lastSignificant) || /\b(return|typeof|case|of|in)$/.test(code.trimEnd()))
    ) {
      // A regex literal: skip it whole (a character class may hold a slash).
      let inClass = false
      for (i++; i < source.length; i++) {
        const r = source[i]
        if (r === '\\') i++
        else if (r === '[') inClass = true
        else if (r === ']') inClass = false
        else if (r === '/' && !inClass) break
      }
      i++
      code += '/regex/'
      lastSignificant = '/'
    } else if (c === "'" || c === '"') {
      readString(c)
      lastSignificant = c
    } else if (c === '`') {
      code += '`'
      i++
      readTemplate('')
      lastSignificant = '`'
    } else if (c === '}' && templates.at(-1)?.depth === depth - 1) {
      depth--
      code += '}'
      i++
      readTemplate(templates.pop()!.text)
      lastSignificant = '`'
    } else {
      if (c === '{') depth++
      if (c === '}') depth--
      code += c
      if (!/\s/.test(c)) lastSignificant = c
      i++
    }
  }
  return { code, strings }
}

/** SQL as written in a string: an upper-case keyword followed by what only SQL puts after it. */
const SQL_TEXT = [
  /\bSELECT\s+(?:\*|DISTINCT\b|COUNT\s*\(|\d+\b|[a-z_"][\w".]*(?:\s+AS\b|\s*,|\s+FROM\b)|[a-z_"][\w".]*\s*$)/,
  /\bINSERT\s+(?:OR\s+\w+\s+)?INTO\s+["\w$]/,
  /\bUPDATE\s+["\w$]+\s+SET\b/,
  /\bDELETE\s+FROM\s+["\w$]/,
  /\bPRAGMA\s+["\w$]/,
  /\bCREATE\s+(?:TEMP(?:ORARY)?\s+|UNIQUE\s+|VIRTUAL\s+)?(?:TABLE|INDEX|VIEW|TRIGGER)\b/,
]

/** Statements a file writes: SQL in its strings, and drizzle's sql`…` templates and sql.raw() in its code. */
function sqlIn(source: string): string[] {
  const { code, strings } = scan(source)
  const found = strings.filter((s) => SQL_TEXT.some((re) => re.test(s))).map((s) => s.trim().slice(0, 80))
  for (const m of code.matchAll(/\bsql\s*(?:<[^>`]*>)?\s*`|\bsql\.raw\s*\(/g)) found.push(m[0])
  return found
}

describe('the data layer', () => {
  test("only src/db/ imports the SQLite driver and drizzle's sqlite-core", () => {
    const ENGINE = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)['"](bun:sqlite|drizzle-orm\/sqlite-core|drizzle-orm\/bun-sqlite)['"]/g
    const offenders = SOURCES.filter((file) => !inDb(file)).flatMap((file) =>
      [...readFileSync(join(ROOT, file), 'utf8').matchAll(ENGINE)].map((m) => `${file}: ${m[1]}`),
    )
    expect(offenders).toEqual([])
  })

  test('SQL is written only in src/db/ and in repo files', () => {
    // The detector itself: SQL in strings and sql`` templates counts; comments and prose do not.
    expect(sqlIn("db.query('SELECT id FROM links WHERE id = ?')")).toHaveLength(1)
    expect(sqlIn('db.query(`SELECT 1`)')).toHaveLength(1)
    expect(sqlIn('run(`DELETE FROM ${table} WHERE x = ?`)')).toHaveLength(1)
    expect(sqlIn('x.set({ n: sql`${t.n} + 1` })')).toHaveLength(1)
    expect(sqlIn("// SELECT id FROM links\n/* UPDATE links SET x */\nconst re = /'/\nthrow new Error('SELECT a plan first')")).toEqual([])

    const offenders = SOURCES.filter((file) => !inDb(file) && !isRepo(file)).flatMap((file) =>
      sqlIn(readFileSync(join(ROOT, file), 'utf8')).map((statement) => `${file}: ${statement}`),
    )
    expect(offenders).toEqual([])
  })
})

// ---------------------------------------------------------------------------------------------------------
// Import cycles (the lead adds this test here).
