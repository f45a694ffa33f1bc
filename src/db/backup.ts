// A consistent copy of a live database file, checked before it is called a backup.
import { Database } from 'bun:sqlite'
import { openDatabase } from './client'

/** Writes a copy of the database at `source` to `target` (a new file); throws when the copy is not sound. */
export function backupDatabase(source: string, target: string): void {
  const db = openDatabase(source)
  try {
    // VACUUM INTO reads one snapshot: readers and writers of the live file carry on meanwhile.
    db.sqlite.query('VACUUM INTO ?').run(target)
  } finally {
    // The connection only: db.close() would also checkpoint the live database's WAL.
    db.sqlite.close(true)
  }
  const copy = new Database(target, { readonly: true })
  const check = (copy.query('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check
  copy.close()
  if (check !== 'ok') throw new Error(`the backup at ${target} failed its integrity check: ${check}`)
}
