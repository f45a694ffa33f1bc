// How the settings table is typed and read. Each setting is added in turn to a SettingsTable, whose type
// parameter collects the key and parsed type of every setting so far: the configuration's type is what the
// table reads, so a setting cannot be left out of it, and a parser's result type is the setting's type.
// A setting sees the settings added before it (a default that follows the port, a key that needs its
// certificate), typed, and only those.

export class ConfigError extends Error {}

/** Where settings come from: flags first, then the environment, then the setting's default. */
export interface Sources {
  env: Record<string, string | undefined>
  flags: Record<string, string | boolean | undefined>
}

/** One setting whose value, of type T, is `key` of the configuration; `Earlier` is what was read before it. */
export interface Setting<K extends string, T, Earlier> {
  key: K
  /** The LNK_* variable. */
  env: string
  /** The --flag of `lnk serve` (without the dashes). */
  flag: string
  help: string
  /** The default, as raw text; it may depend on settings read before, absent when help shows it. */
  fallback: (earlier: Partial<Earlier>) => string
  /** The raw text as the setting's value; an Error's message says what is wrong with it. */
  parse: (raw: string, earlier: Earlier) => T
  /** How the raw value appears in error messages, when it may hold a secret. */
  redact?: (raw: string) => string
}

/** A setting as help and the flag table see it, whatever its type. */
export interface SettingInfo {
  key: string
  env: string
  flag: string
  help: string
  fallback(earlier: object): string
}

/** `{ [key]: value }` typed as such: TypeScript gives an object with a computed generic key a string index. */
const entry = <K extends string, T>(key: K, value: T) => ({ [key]: value }) as { [P in K]: T }

function readSetting<T, Earlier>(s: Setting<string, T, Earlier>, { env, flags }: Sources, earlier: Earlier): T {
  const flag = flags[s.flag]
  const fromFlag = flag === undefined ? undefined : flag === true ? 'true' : String(flag)
  const raw = fromFlag ?? env[s.env]
  const source = fromFlag !== undefined ? `--${s.flag}` : s.env
  const value = raw ?? s.fallback(earlier)
  try {
    return s.parse(value, earlier)
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err)
    throw new ConfigError(`invalid ${raw === undefined ? `default for ${s.env}` : source}=${JSON.stringify(s.redact ? s.redact(value) : value)}: ${why}`)
  }
}

/** The settings added so far, in order, and the reading of them as a configuration of type C. */
export class SettingsTable<C extends object> {
  private constructor(
    readonly settings: readonly SettingInfo[],
    private readonly readAll: (sources: Sources) => C,
  ) {}

  static start(): SettingsTable<{}> {
    return new SettingsTable<{}>([], () => ({}))
  }

  /** The table with `setting` read after the others; a key already taken does not compile. */
  add<K extends string, T>(setting: Setting<K, T, C> & { key: Exclude<K, keyof C> }): SettingsTable<C & { [P in K]: T }> {
    return new SettingsTable([...this.settings, setting], (sources) => {
      const earlier = this.readAll(sources)
      return { ...earlier, ...entry<K, T>(setting.key, readSetting(setting, sources, earlier)) }
    })
  }

  /** Every setting in order; throws ConfigError naming the first that is wrong. */
  read(sources: Sources): C {
    return this.readAll(sources)
  }
}
