// One line per event on stdout (errors on stderr): `time level msg key=value …`, easy to grep and to parse.
import type { LogLevel } from './config'

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 }

export type Fields = Record<string, string | number | boolean | null | undefined>

export interface Logger {
  debug(msg: string, fields?: Fields): void
  info(msg: string, fields?: Fields): void
  warn(msg: string, fields?: Fields): void
  error(msg: string, fields?: Fields): void
}

function format(value: string | number | boolean | null | undefined) {
  const s = String(value)
  return /^[^\s"=]+$/.test(s) ? s : JSON.stringify(s)
}

export function createLogger(level: LogLevel, write: (line: string, isError: boolean) => void = defaultWrite): Logger {
  const emit =
    (lvl: Exclude<LogLevel, 'silent'>) =>
    (msg: string, fields: Fields = {}) => {
      if (RANK[lvl] < RANK[level]) return
      let line = `${new Date().toISOString()} ${lvl} ${msg}`
      for (const [k, v] of Object.entries(fields)) if (v !== undefined) line += ` ${k}=${format(v)}`
      write(line, lvl === 'error')
    }
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') }
}

function defaultWrite(line: string, isError: boolean) {
  ;(isError ? process.stderr : process.stdout).write(line + '\n')
}

export const silentLogger = createLogger('silent')
