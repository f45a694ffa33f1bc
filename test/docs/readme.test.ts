// Keeps README.md and docs/ honest about what can be checked mechanically: every `lnk` command, subcommand
// and flag the README names is accepted by the real command line (main.ts's run(), asked for --help so
// nothing runs), every LNK_* variable it names is a setting of platform/config.ts (or one of the few
// variables read elsewhere, each checked to be read), every setting has a row in the configuration table,
// and every relative link in README.md and docs/*.md reaches a file and, with an #anchor, a heading of it.
// The same command check runs over docs/*.md, and docs/architecture.md's Data table must name every table of
// the schema.
import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { getTableName, is } from 'drizzle-orm'
import { SQLiteTable } from 'drizzle-orm/sqlite-core'
import * as schema from '../../src/db/schema'
import { run } from '../../src/main'
import { SETTINGS } from '../../src/platform/config'

const ROOT = resolve(import.meta.dir, '../..')
const README = join(ROOT, 'README.md')

/** LNK_* variables that are not server settings, and the file that reads each. */
const OTHER_VARIABLES: Record<string, string> = {
  LNK_API_KEY: 'src/cli/listen-args.ts',
  LNK_TEST_DATABASE_URL: 'test/setup/postgres.ts',
  LNK_TEST_SYSTEM_PACKAGES: 'test/setup/preload.ts',
}

// ---- markdown ------------------------------------------------------------------------------------------

/** The text of a markdown file with fenced code blocks cut out, and the code blocks' lines. */
function splitMarkdown(text: string): { prose: string; code: string[] } {
  const prose: string[] = []
  const code: string[] = []
  let fence: string | null = null
  for (const line of text.split('\n')) {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1]
    if (fence === null && marker) fence = marker
    else if (fence !== null && marker?.startsWith(fence)) fence = null
    else (fence === null ? prose : code).push(line)
  }
  return { prose: prose.join('\n'), code }
}

/** Inline code spans of prose (`…`), with a table's escaped pipes unescaped. */
function inlineCode(prose: string): string[] {
  return [...prose.matchAll(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g)].map((m) => m[2]!.trim().replaceAll('\\|', '|'))
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slugOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')
}

function anchorsOf(file: string): Set<string> {
  const { prose } = splitMarkdown(readFileSync(file, 'utf8'))
  const seen = new Map<string, number>()
  const anchors = new Set<string>()
  for (const m of prose.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slugOf(m[1]!)
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    anchors.add(n === 0 ? base : `${base}-${n}`)
  }
  return anchors
}

/** Relative link targets of a markdown file (links and images outside code), as written. */
function relativeLinks(text: string): string[] {
  const prose = splitMarkdown(text).prose.replace(/`[^`\n]*`/g, '')
  const targets = [...prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!)
  return targets.filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t))
}

/** Which of `links` (written in `file`) reach no file, or no heading of it. */
function brokenLinks(file: string, links: string[]): string[] {
  const broken: string[] = []
  for (const link of links) {
    const [path, anchor] = link.split('#', 2) as [string, string | undefined]
    const target = path === '' ? file : resolve(dirname(file), decodeURIComponent(path))
    if (!existsSync(target)) {
      broken.push(`${link} (no file ${target})`)
      continue
    }
    if (anchor !== undefined && (!statSync(target).isFile() || !target.endsWith('.md') || !anchorsOf(target).has(anchor.toLowerCase()))) {
      broken.push(`${link} (no heading #${anchor} in ${target})`)
    }
  }
  return broken
}

// ---- commands ------------------------------------------------------------------------------------------

interface Mention {
  /** The command path as lnk takes it: ['admin', 'create-key'], ['listen'], ['serve']… */
  command: string[]
  flags: string[]
  source: string
}

const PREFIXES: [RegExp, string[]][] = [
  [/^(?:\.\/dist\/|\/usr\/local\/bin\/)?lnk(?:\s+|$)/, []],
  [/^bun run src\/main\.ts(?:\s+|$)/, []],
  [/^bun run admin(?:\s+|$)/, ['admin']],
  [/^bun run migrate(?:\s+|$)/, ['migrate']],
  [/^bun run start(?:\s+|$)/, ['serve']],
]

/** One shell command's `lnk` invocation, if it is one: its command words and the flags it names. */
function parseInvocation(text: string): Mention | null {
  let rest = text
    .trim()
    .replace(/^\$\s+/, '')
    .replace(/^(?:[A-Z_][A-Z0-9_]*=\S*\s+)+/, '')
    .replace(/^docker(?: compose(?: -f \S+)?)? exec(?: -\S+)* \S+\s+/, '')
  let words: string[] | null = null
  for (const [prefix, implied] of PREFIXES) {
    const m = prefix.exec(rest)
    if (m) {
      words = [...implied]
      rest = rest.slice(m[0].length)
      break
    }
  }
  if (words === null) return null
  const tokens = rest
    .replace(/"[^"]*"|'[^']*'/g, 'VALUE')
    .split(/\s+/)
    .map((t) => t.replace(/^[[(]+|[\]),.:;]+$/g, ''))
    .filter(Boolean)
  const flags: string[] = []
  for (const token of tokens) {
    if (token.startsWith('#')) break
    // Placeholders (`<command>`, `…`) stand for words the README leaves open.
    if (token.startsWith('<') || token === '…' || token === '...') continue
    const flag = /^(--?[A-Za-z][A-Za-z0-9-]*)(?:=.*)?$/.exec(token)?.[1]
    if (flag) flags.push(flag)
    // The command word comes first, and `admin` takes one more, its subcommand; a word there that is no
    // command is kept, to fail below.
    else if (flags.length === 0 && (words.length === 0 || (words.length === 1 && words[0] === 'admin'))) words.push(token)
  }
  if (words.length === 0) words.push('serve')
  return { command: words, flags, source: text.trim() }
}

/** Every `lnk` invocation of a markdown text: in inline code and in code blocks (continued lines joined). */
function invocations(markdown: string): Mention[] {
  const { prose, code } = splitMarkdown(markdown)
  // In code blocks a command starts its line; indented lines are continuations, output or diagrams
  // (`lnk node` boxes), never commands.
  const lines = code
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((line) => !/^\s/.test(line))
  const commands = [...inlineCode(prose), ...lines]
  return commands.flatMap((text) => text.split(/\s(?:&&|\|\||;)\s|\s\|\s|\$\(/)).flatMap((part) => parseInvocation(part) ?? [])
}

/** Exit code of main.ts's run() for argv, its output swallowed. */
async function exitCode(argv: string[]): Promise<number> {
  const out = process.stdout.write
  const err = process.stderr.write
  process.stdout.write = (() => true) as typeof process.stdout.write
  process.stderr.write = (() => true) as typeof process.stderr.write
  try {
    return await run(argv)
  } finally {
    process.stdout.write = out
    process.stderr.write = err
  }
}

/** Whether the real command line accepts `flag` on `command` (asked with --help, so nothing runs). */
async function accepts(command: string[], flag: string): Promise<boolean> {
  // `flag VALUE --help`: a string flag takes VALUE, a boolean one leaves it as an argument --help ignores.
  const argv = command[0] === 'serve' && command.length === 1 ? ['serve'] : command
  return (await exitCode([...argv, flag, 'VALUE', '--help'])) === 0
}

async function problemsOf(mentions: Mention[]): Promise<string[]> {
  const problems: string[] = []
  for (const m of mentions) {
    if ((await exitCode([...m.command, '--help'])) !== 0) {
      problems.push(`\`${m.source}\`: lnk has no command "${m.command.join(' ')}"`)
      continue
    }
    for (const flag of m.flags) {
      if (m.command.length === 1 && m.command[0] === 'serve' && (flag === '--version' || flag === '-v' || flag === '--help' || flag === '-h')) continue
      if (!(await accepts(m.command, flag))) problems.push(`\`${m.source}\`: lnk ${m.command.join(' ')} does not accept ${flag}`)
    }
  }
  return problems
}

// ---- the configuration table ---------------------------------------------------------------------------

/** Rows of the README's configuration table: the variables and flags of each. */
function configurationRows(readme: string): { variables: string[]; flags: string[] }[] {
  const section = readme.split(/^## /m).find((s) => s.startsWith('Configuration'))
  if (!section) return []
  return section
    .split('\n')
    .filter((line) => /^\|\s*`LNK_/.test(line))
    .map((line) => {
      const [variables = '', flags = ''] = line.split(/(?<!\\)\|/).slice(1)
      return { variables: [...variables.matchAll(/`(LNK_[A-Z0-9_]+)`/g)].map((m) => m[1]!), flags: [...flags.matchAll(/`(--[a-z0-9-]+)`/g)].map((m) => m[1]!) }
    })
}

const markdownFiles = () => [
  README,
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(ROOT, 'docs', f)),
]

describe('README.md', () => {
  const readme = readFileSync(README, 'utf8')

  test('every lnk command, subcommand and flag it names is accepted by the command line', async () => {
    const mentions = invocations(readme)
    // The README names them all: serve, migrate, listen and every admin command at least.
    expect(new Set(mentions.map((m) => m.command.join(' '))).size).toBeGreaterThan(15)
    expect(await problemsOf(mentions)).toEqual([])
  })

  test('every LNK_* variable it names is a setting (or a variable read elsewhere)', () => {
    const settings = new Set(SETTINGS.map((s) => s.env))
    const named = new Set([...readme.matchAll(/\bLNK_[A-Z0-9_]+/g)].map((m) => m[0]))
    const unknown = [...named].filter((name) => !settings.has(name) && !Object.hasOwn(OTHER_VARIABLES, name))
    expect(unknown).toEqual([])
    for (const [name, file] of Object.entries(OTHER_VARIABLES))
      expect(`${file}: ${readFileSync(join(ROOT, file), 'utf8').includes(name)}`).toBe(`${file}: true`)
  })

  test('every setting has its row in the configuration table, with its flag', () => {
    const rows = configurationRows(readme)
    const missing = SETTINGS.filter((s) => !rows.some((r) => r.variables.includes(s.env) && r.flags.includes(`--${s.flag}`))).map(
      (s) => `${s.env} (--${s.flag})`,
    )
    expect(missing).toEqual([])
    const extra = rows.flatMap((r) => r.variables).filter((v) => !SETTINGS.some((s) => s.env === v))
    expect(extra).toEqual([])
  })
})

describe('docs/*.md', () => {
  test('every lnk command, subcommand and flag they name is accepted by the command line', async () => {
    const files = markdownFiles().filter((file) => file !== README)
    expect(files.flatMap((file) => invocations(readFileSync(file, 'utf8'))).length).toBeGreaterThan(30)
    const problems = await Promise.all(
      files.map(async (file) => (await problemsOf(invocations(readFileSync(file, 'utf8')))).map((p) => `${file.slice(ROOT.length + 1)}: ${p}`)),
    )
    expect(problems.flat()).toEqual([])
  })
})

describe('docs/architecture.md', () => {
  test('its Data table names every table of src/db/schema', () => {
    const text = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8')
    const data = text.slice(text.indexOf('## Data'))
    const named = new Set([...data.matchAll(/^\|([^|]*)\|/gm)].flatMap((m) => [...m[1]!.matchAll(/`([a-z_]+)`/g)].map((n) => n[1]!)))
    const tables = Object.values(schema).flatMap((value) => (is(value, SQLiteTable) ? [getTableName(value)] : []))
    expect(tables.length).toBeGreaterThan(30)
    expect(tables.filter((name) => !named.has(name))).toEqual([])
  })
})

describe('links in README.md and docs/*.md', () => {
  test('every relative link reaches a file, and every #anchor a heading', () => {
    const broken = markdownFiles().flatMap((file) =>
      brokenLinks(file, relativeLinks(readFileSync(file, 'utf8'))).map((b) => `${file.slice(ROOT.length + 1)}: ${b}`),
    )
    expect(broken).toEqual([])
  })
})

describe('the checks themselves', () => {
  test('a made-up flag, a made-up command and a broken link are caught', async () => {
    const made = invocations(
      '`lnk admin create-key --workspace W --frobnicate` and\n\n```sh\nlnk teleport --now\nbun run src/main.ts listen --api-key K --forward-to 3000 ' +
        '--colour\n```\n',
    )
    expect(made.map((m) => m.command.join(' '))).toEqual(['admin create-key', 'teleport', 'listen'])
    expect(await problemsOf(made)).toEqual([
      '`lnk admin create-key --workspace W --frobnicate`: lnk admin create-key does not accept --frobnicate',
      '`lnk teleport --now`: lnk has no command "teleport"',
      '`bun run src/main.ts listen --api-key K --forward-to 3000 --colour`: lnk listen does not accept --colour',
    ])
    expect(await problemsOf(invocations('`lnk admin create-key --workspace W --name N --json`'))).toEqual([])
    expect(brokenLinks(README, relativeLinks('[a](docs/no-such-page.md) [b](docs/listen.md#no-such-heading) [c](docs/listen.md#flags)'))).toHaveLength(2)
  })
})
