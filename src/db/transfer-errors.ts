// How moving data between engines refuses: AppErrors like every other refusal, so the command line says
// each in one line and exits 1 (the contract keeps 2 for usage errors). Nothing was written when one is thrown.
import { AppError } from '../platform/errors'

export const targetNotEmpty = (label: string, tables: Record<string, number>) => {
  const workspaces = tables.workspaces ?? 0
  const what = workspaces
    ? `${workspaces} workspace(s)`
    : `rows (${Object.entries(tables)
        .map(([t, n]) => `${t}: ${n}`)
        .join(', ')})`
  return new AppError(
    'conflict',
    `${label} already holds ${what}; import only into an empty database (a new data directory, or a new PostgreSQL database after createdb)`,
  )
}

export const schemaMismatch = (file: string, fileTag: string, buildTag: string) =>
  new AppError(
    'unsupported_version',
    `${file} was exported at schema ${fileTag}, this lnk is at ${buildTag}; import it with the same lnk version that exported it`,
  )

export const sourceNotMigrated = (label: string, current: string, expected: string) =>
  new AppError(
    'unsupported_version',
    `${label} is at schema ${current}, this lnk expects ${expected}; run 'lnk migrate' with the same settings (or the lnk version that wrote it) first`,
  )

/** A word as a POSIX shell reads it back: quoted only when it must be. */
const shellWord = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`)

/** backup copies the SQLite file; a PostgreSQL database is dumped by PostgreSQL's own tool. */
export function usePgDump(url: string, file: string): AppError {
  let where = '--dbname=<database>'
  try {
    const u = new URL(url)
    const user = decodeURIComponent(u.username)
    where = `--host=${shellWord(u.hostname || 'localhost')} --port=${u.port || '5432'}${user ? ` --username=${shellWord(user)}` : ''} --dbname=${shellWord(decodeURIComponent(u.pathname.slice(1)))}`
  } catch {
    /* the URL was checked by the config; keep the placeholder */
  }
  return new AppError(
    'invalid_request',
    `lnk admin backup copies the SQLite file, and LNK_DATABASE_URL selects PostgreSQL; dump it with: pg_dump --format=custom --file=${shellWord(file)} ` +
      `${where} (password from PGPASSWORD or ~/.pgpass), or write a copy either engine can import with: lnk admin export ${shellWord(file)}`,
  )
}

export const fileNotFound = (file: string) => new AppError('not_found', `no file at ${file}`)
export const fileExists = (file: string) => new AppError('conflict', `${file} already exists; choose a new file name`)
export const dirNotFound = (dir: string) => new AppError('not_found', `directory ${dir} does not exist`)
export const noDatabase = (path: string) => new AppError('not_found', `no database at ${path}; check --data-dir / LNK_DATA_DIR`)

/** What is wrong with the file, where. */
export const badLine = (file: string, line: number, why: string) => new AppError('invalid_request', `${file} line ${line}: ${why}`)
