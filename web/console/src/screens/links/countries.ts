// The countries a routing rule or a described visit can name: ISO 3166-1 alpha-2 codes with the names the
// browser itself knows (Intl.DisplayNames), so the console carries no list of its own.

/**
 * Codes the browser's region names include that are not current ISO 3166-1 alpha-2 countries: withdrawn
 * codes, reservations for other bodies, and private-use groupings. XK (Kosovo) stays: address databases use it.
 */
const NOT_COUNTRIES = new Set('AC AN BU CP CQ CS DD DG DY EA EU EZ FX HV IC NH QO RH SU TA TP UK UN VD XA XB YD YU ZR ZZ'.split(' '))

let countries: { value: string; label: string }[] | undefined
/** Every country code the browser has an English name for, by name: the names come from Intl, no data file. */
export function countryChoices(): readonly { value: string; label: string }[] {
  if (countries) return countries
  const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' })
  const found: { value: string; label: string }[] = []
  for (let a = 65; a <= 90; a++)
    for (let b = 65; b <= 90; b++) {
      const code = String.fromCharCode(a, b)
      const name = NOT_COUNTRIES.has(code) ? undefined : names.of(code)
      if (name && name !== code) found.push({ value: code, label: name })
    }
  countries = found.sort((x, y) => x.label.localeCompare(y.label, 'en'))
  return countries
}
