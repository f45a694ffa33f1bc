// What `lnk admin export` and `lnk admin import` print when done: the summary as JSON, or a headline and
// each table's row count.
import type { TransferSummary } from '../../db/transfer'
import type { CommandContext } from '../command'
import { table } from './shared'

export function reportTransfer(summary: TransferSummary, headline: () => string, { values, out }: CommandContext): number {
  if (values.json === true) {
    out(JSON.stringify(summary))
    return 0
  }
  out(headline())
  for (const line of table(Object.entries(summary.tables).map(([name, rows]) => [name, String(rows)]))) out(line)
  return 0
}
