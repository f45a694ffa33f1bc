// Instants in the viewer's own time zone and locale, as every console screen shows them.
const format = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })

export const when = (iso: string) => format.format(new Date(iso))
