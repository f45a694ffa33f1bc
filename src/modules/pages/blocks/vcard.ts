// vCard 3.0 (RFC 2426) for the contact block's "Save contact" link. Text values escape backslash, newline,
// comma and semicolon (a structured value such as N or ADR would otherwise split on the author's commas);
// lines end in CRLF and are folded at 75 octets without cutting a UTF-8 character.

export interface VCardInput {
  name: string
  organisation?: string
  title?: string
  email?: string
  phone?: string
  /** Already checked to be an http(s) URL: a URI value, not text, so it is not escaped. */
  website?: string
  address?: string
  note?: string
}

export const escapeVCardText = (value: string) =>
  value
    .replace(/\\/g, '\\\\')
    .replace(/\r\n?|\n/g, '\\n')
    .replace(/,/g, '\\,')
    .replace(/;/g, '\\;')

const encoder = new TextEncoder()

/** Splits a content line into physical lines of at most 75 octets; continuations start with a space. */
export function foldLine(line: string): string {
  const parts: string[] = []
  let current = ''
  let octets = 0
  for (const ch of line) {
    const size = encoder.encode(ch).length
    // Continuation lines lose one octet to their leading space.
    const limit = parts.length ? 74 : 75
    if (octets + size > limit) {
      parts.push(current)
      current = ''
      octets = 0
    }
    current += ch
    octets += size
  }
  parts.push(current)
  return parts.join('\r\n ')
}

export function buildVCard(c: VCardInput): string {
  const value = (s: string | undefined) => escapeVCardText((s ?? '').trim())
  const name = value(c.name)
  const properties: [string, string][] = [
    ['FN', name],
    // People's names do not split reliably into family and given names, so the whole name is the given
    // name: clients then show it as written.
    ['N', `;${name};;;`],
    ['ORG', value(c.organisation)],
    ['TITLE', value(c.title)],
    ['EMAIL;TYPE=INTERNET', value(c.email)],
    ['TEL;TYPE=VOICE', value(c.phone)],
    // The address is free text: it goes in the street part, its lines kept as escaped newlines.
    ['ADR;TYPE=WORK', value(c.address) && `;;${value(c.address)};;;;`],
    ['URL', (c.website ?? '').trim()],
    ['NOTE', value(c.note)],
  ]
  const lines = ['BEGIN:VCARD', 'VERSION:3.0', ...properties.filter(([, v]) => v).map(([k, v]) => `${k}:${v}`), 'END:VCARD']
  return lines.map(foldLine).join('\r\n') + '\r\n'
}

/** The vCard as a data: URI, for an <a download> that works without JavaScript. */
export const vCardDataUri = (c: VCardInput) => `data:text/vcard;charset=utf-8,${encodeURIComponent(buildVCard(c))}`
