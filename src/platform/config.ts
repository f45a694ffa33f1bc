// Environment + flags -> one validated, typed Config. Every setting is an LNK_* variable and the matching
// --flag on `serve`; a bad value stops start-up with one line that names it. The settings are the table of
// config/settings.ts, their parsers config/parse.ts; this is what the rest of lnk imports.
import { type Config, readSettings, SETTINGS } from './config/settings'

export { isValidCidr, type LogLevel, redactUrl } from './config/parse'
export { type Config, SETTINGS } from './config/settings'
export { ConfigError } from './config/table'

/**
 * Reads every setting from flags (first) or the environment, falling back to defaults.
 * Throws ConfigError with one line naming the variable and what is wrong.
 */
export function loadConfig(env: Record<string, string | undefined>, flags: Record<string, string | boolean | undefined> = {}): Config {
  return readSettings({ env, flags })
}

/** parseArgs option table for the settings, so every command accepts them the same way. */
export function settingFlags(): Record<string, { type: 'string' }> {
  return Object.fromEntries(SETTINGS.map((s) => [s.flag, { type: 'string' as const }]))
}

export function settingsHelp(): string {
  return SETTINGS.map((s) => `  --${s.flag.padEnd(24)} ${s.env.padEnd(30)} ${s.help} (default ${s.fallback({}) || 'empty'})`).join('\n')
}
