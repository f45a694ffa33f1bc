// What every `lnk admin` command is made of (an AdminCommand, listed by index.ts) and the helpers several of
// them use: flag checks that are usage errors, the operator acting in a workspace, aligned columns.
import { type Runtime, openRuntime } from '../../runtime'
import type { DomainView } from '../../modules/domains/model'
import type { Who } from '../../modules/domains'
import { workspaceNotFound } from '../../modules/identity'
import type { IdentityRepo, WorkspaceRow } from '../../modules/identity'
import { type CommandContext, type Options, UsageError } from '../command'

/** One `lnk admin` command. Its help is `Usage: lnk admin <name> <usage>`, a blank line, then `details`. */
export interface AdminCommand {
  name: string
  /** Its arguments and flags, as its Usage line and the listing of 'lnk admin --help' show them. */
  usage: string
  /** What it does, in the one line the listing shows. */
  summary: string
  /** The rest of its --help. */
  details: string
  options: Options
  positionals: number
  run(context: CommandContext): Promise<number>
}

/** The work of a command that acts through the services, on a runtime opened for it and closed after. */
export async function withRuntime(context: CommandContext, work: (rt: Runtime) => Promise<number>): Promise<number> {
  const rt = await openRuntime(context.config, { log: context.log })
  try {
    return await work(rt)
  } finally {
    await rt.close()
  }
}

export const str = (v: unknown) => (typeof v === 'string' ? v : undefined)

export function wholeNumber(flag: string, raw: unknown, min: number, max: number): number {
  const v = String(raw)
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new UsageError(`--${flag} must be a whole number from ${min} to ${max}`)
  return Number(v)
}

export function required(values: Record<string, unknown>, name: string): string {
  const v = values[name]
  if (typeof v !== 'string' || !v.trim()) throw new UsageError(`--${name} is required`)
  return v
}

/** The operator acting in a workspace: a live caller whom no key's scope filters bind. */
export const operatorIn = (workspace: WorkspaceRow): Who => ({ workspace, mode: 'live', key: { scopeFilters: null } })

export async function workspaceOf(identity: IdentityRepo, ref: string): Promise<WorkspaceRow> {
  const workspace = await identity.findWorkspace(ref)
  if (!workspace) throw workspaceNotFound(ref)
  return workspace
}

export const named = (d: DomainView) => (d.unicodeDomain === d.domain ? d.domain : `${d.unicodeDomain} (${d.domain})`)

/** Rows of cells as aligned columns. */
export function table(rows: string[][], indent = '  '): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  return rows.map((r) => `${indent}${r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ')}`.trimEnd())
}

/**
 * `lead` followed by `words`, wrapped at `width` columns with continuation lines starting under the first
 * word. A bracketed group ("[--mode live|test]") is one word, so an option is never split from its value.
 */
export function wrap(lead: string, words: string, width: number): string {
  const lines: string[] = []
  let line = lead
  for (const word of words.match(/\[[^\]]*\]|\S+/g) ?? []) {
    if (line.length > lead.length && line.length + 1 + word.length > width) {
      lines.push(line)
      line = `${' '.repeat(lead.length)} ${word}`
    } else line = `${line} ${word}`
  }
  lines.push(line)
  return lines.join('\n')
}
