// Contact: a business card. E-mail and phone are mailto:/tel: links, the website goes through the page's
// tracked redirect, and "Save contact" downloads a vCard from a data: URI (no JavaScript, no request).
// Classes: b-contact, b-contact-name, b-contact-role, b-contact-details, b-contact-email, b-contact-phone,
// b-contact-website, b-contact-address, b-contact-label, b-contact-link, b-contact-note, b-contact-save.
import { t, type Static } from 'elysia'
import { esc, fieldsSchema, safeUrl, text, urlIssue } from './fields'
import type { BlockType, FieldIssue } from './types'
import { vCardDataUri } from './vcard'

const EMAIL = /^[^\s@<>()[\]",;:\\]+@[^\s@<>()[\]",;:\\]+\.[^\s@<>()[\]",;:\\]+$/
const PHONE = /^\+?[0-9 ()./-]{3,40}$/
const digits = (phone: string) => phone.replace(/[^0-9+]/g, '')
const validEmail = (v: unknown): v is string => typeof v === 'string' && EMAIL.test(v)
const validPhone = (v: unknown): v is string => typeof v === 'string' && PHONE.test(v) && digits(v).replace('+', '').length >= 3

const schema = fieldsSchema(
  'contact',
  {
    name: t.String({ minLength: 1, maxLength: 100, description: "The person's or the place's name" }),
    organisation: t.String({ maxLength: 100, description: 'Company or organisation; empty for none' }),
    title: t.String({ maxLength: 100, description: 'Role or job title; empty for none' }),
    email: t.String({ maxLength: 254, description: 'E-mail address (a mailto: link); empty for none' }),
    phone: t.String({ maxLength: 40, description: 'Phone number with its country code, e.g. +1 555 0100 (a tel: link); empty for none' }),
    website: t.String({ maxLength: 2048, description: 'Website (http or https); empty for none' }),
    address: t.String({ maxLength: 300, description: 'Postal address, one line per line; empty for none' }),
    note: t.String({ maxLength: 500, description: 'A line under the details (e.g. opening hours); empty for none' }),
    saveButton: t.Boolean({ description: 'Show a "Save contact" link that downloads the details as a vCard' }),
  },
  'Contact details with a downloadable vCard',
)
export type ContactFields = Static<typeof schema>

const detail = (kind: string, label: string, value: string) => `<li class="b-contact-${kind}"><span class="b-contact-label">${label}</span> ${value}</li>`

/** A file name for the vCard, from the name's letters and digits. */
const fileName = (name: string) =>
  (name
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .toLowerCase()
    .slice(0, 60) || 'contact') + '.vcf'

export const contact: BlockType<ContactFields> = {
  type: 'contact',
  title: 'Contact',
  description: 'Contact details (e-mail, phone, website, address) with a "Save contact" vCard download.',
  schema,
  defaults: {
    name: 'Your name',
    organisation: '',
    title: '',
    email: 'you@example.com',
    phone: '',
    website: 'https://example.com',
    address: '',
    note: '',
    saveButton: true,
  },
  check(f) {
    const issues: FieldIssue[] = []
    if (f.email && !validEmail(f.email)) issues.push({ path: 'email', message: 'Must be an e-mail address such as name@example.com' })
    if (f.phone && !validPhone(f.phone)) issues.push({ path: 'phone', message: 'Must be a phone number: digits, spaces, ( ) . / - and an optional leading +' })
    if (f.website) issues.push(...urlIssue('website', f.website))
    return issues
  },
  render(f, ctx) {
    const name = text(f.name)
    const role = [text(f.title), text(f.organisation)].filter(Boolean).join(' · ')
    const website = safeUrl(f.website)
    const items: string[] = []
    const email = text(f.email)
    if (email) items.push(detail('email', 'E-mail', validEmail(email) ? `<a class="b-contact-link" href="mailto:${esc(email)}">${esc(email)}</a>` : esc(email)))
    const phone = text(f.phone)
    if (phone)
      items.push(detail('phone', 'Phone', validPhone(phone) ? `<a class="b-contact-link" href="tel:${esc(digits(phone))}">${esc(phone)}</a>` : esc(phone)))
    if (website) {
      const shown = new URL(website)
      const label = (shown.host + shown.pathname).replace(/\/$/, '')
      items.push(detail('website', 'Website', `<a class="b-contact-link" href="${esc(ctx.trackedHref())}">${esc(label)}</a>`))
    }
    const address = text(f.address)
    if (address)
      items.push(
        detail(
          'address',
          'Address',
          address
            .split(/\r\n?|\n/)
            .map((l) => esc(l.trim()))
            .join('<br>'),
        ),
      )
    const card = {
      name,
      organisation: text(f.organisation),
      title: text(f.title),
      email: validEmail(email) ? email : '',
      phone: validPhone(phone) ? phone : '',
      website: website ?? '',
      address,
      note: text(f.note),
    }
    return (
      `<div class="b-contact">` +
      `<p class="b-contact-name">${esc(name)}</p>` +
      (role ? `<p class="b-contact-role">${esc(role)}</p>` : '') +
      (items.length ? `<ul class="b-contact-details">${items.join('')}</ul>` : '') +
      (card.note ? `<p class="b-contact-note">${esc(card.note)}</p>` : '') +
      (f.saveButton === false ? '' : `<a class="b-contact-save" href="${esc(vCardDataUri(card))}" download="${esc(fileName(name))}">Save contact</a>`) +
      `</div>`
    )
  },
  outboundUrl: (f, index) => (index === 0 ? safeUrl(f.website) : null),
}
