// The pages a visitor of a short link may see instead of a redirect. Every value is escaped.
import type { RedirectLink } from '../links'
import { escapeHtml, htmlPage, scriptJson } from '../../platform/html'
import type { Unavailable } from './decide'
import type { PublicStats } from './port'
import type { Route } from './routing'
import { DAY_MS } from '../../platform/time'

/** Where a gate page's form posts: the link's own path with the visitor's query (`?…` or ''). */
const formAction = (slug: string, query = '') => escapeHtml(`/${encodeURIComponent(slug)}${query}`)

export const notFoundPage = () =>
  htmlPage({ status: 404, title: 'Link not found', body: '<h1>Link not found</h1><p>This short link does not exist or is no longer active.</p>' })

/** `/` of a custom domain whose owner set no rootRedirectUrl. */
export const domainRootPage = (hostname: string) =>
  htmlPage({
    title: hostname,
    body: `<h1>${escapeHtml(hostname)}</h1><p>This domain serves short links. Open a short link to be taken to its destination.</p>`,
  })

const UNAVAILABLE: Record<Unavailable, string> = {
  expired: 'This link has expired.',
  clickLimit: 'This link has reached its click limit.',
  uniqueIpLimit: 'This link has reached the number of visitors it admits.',
}

export const gonePage = (reason: Unavailable) =>
  htmlPage({ status: 410, title: 'Link no longer available', body: `<h1>This link is no longer available</h1><p>${escapeHtml(UNAVAILABLE[reason])}</p>` })

/** What chose a routed visit's destination, in words: the rule (by name when it has one) or the variant. */
function routeNote(link: RedirectLink, route: Route | null): string {
  if (route === null) return ''
  if (route.ruleId !== null) {
    const name = link.routingRules?.find((r) => r.id === route.ruleId)?.name
    return `<p class="muted">Chosen by the routing rule ${name ? `“${escapeHtml(name)}” ` : ''}(${escapeHtml(route.ruleId)}).</p>`
  }
  if (route.variantId !== null) return `<p class="muted">Chosen as the A/B variant ${escapeHtml(route.variantId)} for this visitor.</p>`
  return '<p class="muted">No routing rule matches this visit: the link’s own destination.</p>'
}

/** A test link's page: where this visit would have gone (`route`: how its rules or variants chose it, null: the link has neither). */
export const sandboxPage = (link: RedirectLink, destination: string, route: Route | null = null) =>
  htmlPage({
    title: 'Test link',
    body:
      `<h1>Test link</h1><p>This link was created with a test key. Test links never redirect and record no clicks.</p><p>It would send ` +
      `${route === null ? 'visitors' : 'this visit'} to:</p><p class="dest">${escapeHtml(destination)}</p>${routeNote(link, route)}<p ` +
      `class="muted">${escapeHtml(link.domain)}/${escapeHtml(link.slug)}</p>`,
  })

export const passwordPage = (slug: string, opts: { error?: string; status?: number; query?: string } = {}) =>
  htmlPage({
    status: opts.status ?? (opts.error ? 401 : 200),
    title: 'Password required',
    body:
      `<h1>Password required</h1><p>This link is protected. Enter its password to continue.</p>${opts.error ? `<p class="error" role="alert">${escapeHtml(opts.error)}</p>` : ''}<form method="post" action="${formAction(slug, opts.query)}"><input type="hidden" name="gate" value="password"><label ` +
      `for="pw">Password</label><input id="pw" name="password" type="password" required autocomplete="current-password" autofocus ` +
      `maxlength="128"><div class="actions"><button type="submit">Continue</button></div></form>`,
  })

export const throttledPage = (retryAfter: number) =>
  htmlPage({
    status: 429,
    title: 'Too many attempts',
    body: `<h1>Too many attempts</h1><p>Wait ${Math.ceil(retryAfter / 60)} minute(s) before trying the password again.</p>`,
    headers: { 'retry-after': String(retryAfter) },
  })

/** A proof-of-work page: the browser finds the number ALTCHA asks for and posts it back. */
export function captchaPage(
  slug: string,
  challenge: { algorithm: string; challenge: string; maxnumber?: number; salt: string; signature: string },
  error?: string,
  query = '',
) {
  const script = `(async()=>{const c=${scriptJson(challenge)};const s=document.getElementById('status');const enc=new TextEncoder();
const hex=b=>Array.from(new Uint8Array(b),x=>x.toString(16).padStart(2,'0')).join('');
for(let n=0;n<=(c.maxnumber||1e6);n++){const h=hex(await crypto.subtle.digest('SHA-256',enc.encode(c.salt+n)));
if(h===c.challenge){document.getElementById('altcha').value=btoa(JSON.stringify({algorithm:c.algorithm,challenge:c.challenge,number:n,salt:c.salt,signature:c.signature}));s.textContent='Verified. Continuing…';document.getElementById('f').submit();return}}
s.textContent='Could not verify this browser. Reload the page to try again.'})()`
  return htmlPage({
    status: error ? 403 : 200,
    title: 'Checking your browser',
    body:
      `<h1>One moment</h1><p>This link checks that visitors are people. Your browser is solving a small puzzle; no data leaves it.</p>${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}<p id="status" role="status" aria-live="polite">Working…</p><form id="f" method="post" action="${formAction(slug, query)}"><input ` +
      `type="hidden" name="gate" value="captcha"><input type="hidden" id="altcha" name="altcha"><noscript><p>This check needs ` +
      `JavaScript.</p></noscript></form>`,
    script,
  })
}

export const consentPage = (slug: string, destination: string, query = '') =>
  htmlPage({
    title: 'You are leaving this site',
    body:
      `<h1>Continue to another site?</h1><p>This link leads to:</p><p class="dest">${escapeHtml(destination)}</p><form method="post" ` +
      `action="${formAction(slug, query)}"><input type="hidden" name="gate" value="consent"><div class="actions"><button ` +
      `type="submit">Continue</button><a class="button secondary" id="back" href="#">Go back</a></div></form>`,
    // A javascript: link would be blocked by the page's Content-Security-Policy; a listener is allowed.
    script: `document.getElementById('back').addEventListener('click',(e)=>{e.preventDefault();history.back()})`,
  })

/** What link-preview crawlers see: the link's Open Graph and Twitter card tags. */
export function previewPage(link: RedirectLink, shortUrl: string, destination: string) {
  const title = link.ogTitle ?? link.title ?? shortUrl
  const description = link.ogDescription ?? link.description ?? ''
  const meta = [
    ['og:title', title],
    ['og:description', description],
    ['og:url', shortUrl],
    ['og:type', 'website'],
    ...(link.ogImageUrl ? [['og:image', link.ogImageUrl]] : []),
  ]
    .map(([p, c]) => `<meta property="${p}" content="${escapeHtml(c)}">`)
    .join('')
  const twitter = [
    ['twitter:card', link.twitterCard ?? (link.ogImageUrl ? 'summary_large_image' : 'summary')],
    ['twitter:title', title],
    ['twitter:description', description],
    ...(link.ogImageUrl ? [['twitter:image', link.ogImageUrl]] : []),
  ]
    .map(([n, c]) => `<meta name="${n}" content="${escapeHtml(c)}">`)
    .join('')
  return htmlPage({
    title,
    head: `${meta}${twitter}<meta name="description" content="${escapeHtml(description)}">`,
    body:
      `<h1>${escapeHtml(title)}</h1>${description ? `<p>${escapeHtml(description)}</p>` : ''}<p><a ` +
      `href="${escapeHtml(destination)}">${escapeHtml(destination)}</a></p>`,
  })
}

/** Tries the app, then the web destination after a moment; both are also offered as links. */
export function deepLinkPage(appName: string, appHref: string, destination: string) {
  return htmlPage({
    title: `Opening ${appName}`,
    body:
      `<h1>Opening ${escapeHtml(appName)}…</h1><p>If nothing happens, continue in your browser.</p><div class="actions"><a class="button" ` +
      `href="${escapeHtml(appHref)}">Open in ${escapeHtml(appName)}</a><a class="button secondary" id="web" ` +
      `href="${escapeHtml(destination)}">Continue in browser</a></div>`,
    script:
      `(()=>{const app=${scriptJson(appHref)},web=${scriptJson(destination)};let ` +
      `left=false;document.addEventListener('visibilitychange',()=>{if(document.hidden)left=true});setTimeout(()=>{if(!left)location.replace(web)},1500);location.href=app})()`,
  })
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
const shortDay = (ms: number) => {
  const d = new Date(ms)
  return `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`
}
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)
const count = (n: number) => n.toLocaleString('en-US')
const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 })
const plural = (n: number, one: string, many: string) => `${count(n)} ${n === 1 ? one : many}`

/** 1, 2, 5, 10, 20, 50…: the smallest such step at least `x`. */
function niceStep(x: number): number {
  if (x <= 1) return 1
  const p = 10 ** Math.floor(Math.log10(x))
  const f = x / p
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p
}

let regionNames: Intl.DisplayNames | null | undefined
function countryName(code: string | null): string {
  if (!code) return 'Unknown'
  try {
    regionNames ??= new Intl.DisplayNames(['en'], { type: 'region' })
  } catch {
    regionNames = null
  }
  let name: string | undefined
  try {
    name = regionNames?.of(code)
  } catch {
    // Not a region code (a stored value from elsewhere): shown as it is, escaped by the caller.
  }
  return name && name !== code ? `${name} (${code})` : code
}

/** Clicks per day as an SVG bar chart (sized by its viewBox, so it scales to the phone's width). */
function dayChart(from: number, days: number[]): string {
  const W = 360
  const H = 190
  const left = 32
  const right = 6
  const top = 8
  const bottom = 26
  const plotW = W - left - right
  const plotH = H - top - bottom
  const max = Math.max(0, ...days)
  const step = niceStep(max / 4)
  const ceiling = Math.max(step, Math.ceil(max / step) * step)
  const y = (v: number) => top + plotH - (v / ceiling) * plotH
  const slot = plotW / days.length
  const barW = Math.max(1, slot * 0.72)
  const total = days.reduce((a, b) => a + b, 0)
  const last = from + (days.length - 1) * DAY_MS
  const peak = days.indexOf(max)
  const summary = `Clicks per day from ${shortDay(from)} to ${shortDay(last)} (UTC): ${plural(total, 'click', 'clicks')} in total${max > 0 ? `, most on ${shortDay(from + peak * DAY_MS)} (${count(max)})` : ''}.`
  const parts: string[] = []
  for (let v = 0; v <= ceiling; v += step) {
    const yy = y(v).toFixed(1)
    parts.push(
      `<line class="grid" x1="${left}" x2="${W - right}" y1="${yy}" y2="${yy}"/><text class="axis" x="${left - 5}" y="${yy}" text-anchor="end" ` +
        `dominant-baseline="middle">${compact.format(v)}</text>`,
    )
  }
  days.forEach((n, i) => {
    if (n <= 0) return
    const x = left + i * slot + (slot - barW) / 2
    const h = Math.max(1, (n / ceiling) * plotH)
    parts.push(
      `<rect class="bar" x="${x.toFixed(1)}" y="${(top + plotH - h).toFixed(1)}" width="${barW.toFixed(1)}" height="${h.toFixed(1)}" ` +
        `rx="1.5"><title>${shortDay(from + i * DAY_MS)}: ${plural(n, 'click', 'clicks')}</title></rect>`,
    )
  })
  parts.push(`<line class="base" x1="${left}" x2="${W - right}" y1="${top + plotH}" y2="${top + plotH}"/>`)
  for (const i of [0, 7, 14, 21, days.length - 1]) {
    if (i >= days.length) continue
    const x = left + i * slot + slot / 2
    const anchor = i === 0 ? 'start' : i === days.length - 1 ? 'end' : 'middle'
    const tx = anchor === 'start' ? left : anchor === 'end' ? W - right : x
    parts.push(
      `<line class="tick" x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="${top + plotH}" y2="${top + plotH + 4}"/><text class="axis" ` +
        `x="${tx.toFixed(1)}" y="${H - 6}" text-anchor="${anchor}">${shortDay(from + i * DAY_MS)}</text>`,
    )
  }
  const svg =
    `<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="chart-title" aria-label="${escapeHtml(summary)}" ` +
    `xmlns="http://www.w3.org/2000/svg"><title id="chart-title">${escapeHtml(summary)}</title>${parts.join('')}</svg>`
  const rows = days.map((n, i) => `<tr><th scope="row">${isoDay(from + i * DAY_MS)}</th><td>${n}</td></tr>`).join('')
  const table =
    `<table class="sr-only"><caption>Clicks per day (UTC)</caption><thead><tr><th scope="col">Day</th><th ` +
    `scope="col">Clicks</th></tr></thead><tbody>${rows}</tbody></table>`
  return svg + table
}

function topTable(caption: string, head: string, rows: { label: string; clicks: number }[]): string {
  if (!rows.length) return `<section><h2>${caption}</h2><p class="muted">No clicks in the last 30 days.</p></section>`
  const max = rows[0]!.clicks || 1
  const body = rows
    .map(
      (r) =>
        `<tr><th scope="row"><span class="meter" style="width:${Math.round((r.clicks / max) * 100)}%"></span><span ` +
        `class="label">${escapeHtml(r.label)}</span></th><td>${count(r.clicks)}</td></tr>`,
    )
    .join('')
  return (
    `<section><h2 id="${head}">${caption}</h2><table class="top" aria-labelledby="${head}"><thead><tr><th ` +
    `scope="col">${head === 'countries' ? 'Country' : 'Referrer'}</th><th ` +
    `scope="col">Clicks</th></tr></thead><tbody>${body}</tbody></table></section>`
  )
}

const STATS_STYLE = `<style>
html main{max-width:42rem}
.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0}
.short{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.95rem;word-break:break-all;margin:0 0 .25rem}
.title{font-size:1.05rem;margin:0 0 1rem;word-break:break-word}
.totals{display:grid;grid-template-columns:1fr 1fr;gap:.75rem;margin:1rem 0}
.totals div{border:1px solid var(--border);border-radius:8px;padding:.6rem .75rem}
.totals strong{display:block;font-size:1.6rem;line-height:1.2}
h2{font-size:1.05rem;margin:1.25rem 0 .5rem}
.chart{display:block;width:100%;height:auto}
.chart .bar{fill:var(--accent)}.chart .grid{stroke:var(--border);stroke-width:.6}.chart .base,.chart .tick{stroke:var(--muted);stroke-width:.8}
.chart .axis{fill:var(--muted);font-size:12.5px;font-family:system-ui,sans-serif}
.top{width:100%;border-collapse:collapse;font-size:.95rem}
.top th,.top td{padding:.3rem .4rem;border-bottom:1px solid var(--border);text-align:left}
.top thead th{font-size:.8rem;color:var(--muted);font-weight:600}
.top td{text-align:right;width:5rem;font-variant-numeric:tabular-nums}
.top tbody th{font-weight:400;position:relative;word-break:break-all}
.top .meter{position:absolute;left:0;top:15%;bottom:15%;background:var(--accent);opacity:.14;border-radius:3px}
.top .label{position:relative}
@media (min-width:40rem){.lists{display:grid;grid-template-columns:1fr 1fr;gap:1.25rem}}
</style>`

export interface StatsView {
  shortUrl: string
  title: string | null
  stats: PublicStats
  now: number
}

/** The public stats page of a link: counters, clicks per day, top countries and referrers. Nothing private. */
export function statsPage(v: StatsView): Response {
  const s = v.stats
  const recent = s.days.reduce((a, b) => a + b, 0)
  const body = [
    `<h1>Link statistics</h1>`,
    `<p class="short">${escapeHtml(v.shortUrl)}</p>`,
    v.title ? `<p class="title">${escapeHtml(v.title)}</p>` : '',
    `<div class="totals"><div><strong>${count(s.totalClicks)}</strong><span class="muted">total ` +
      `clicks</span></div><div><strong>${count(s.uniqueClicks)}</strong><span class="muted">unique visitors</span></div></div>`,
    `<section><h2>Clicks per day, last 30 days</h2>${dayChart(s.from, s.days)}<p class="muted">${plural(recent, 'click', 'clicks')} in the last 30 days ` +
      `(UTC).</p></section>`,
    `<div class="lists">`,
    topTable(
      'Top countries',
      'countries',
      s.countries.map((c) => ({ label: countryName(c.country), clicks: c.clicks })),
    ),
    topTable(
      'Top referrers',
      'referrers',
      s.referrers.map((r) => ({ label: r.host ?? 'direct', clicks: r.clicks })),
    ),
    `</div>`,
    `<p class="muted">People's clicks only; bots are not counted. Updated ${escapeHtml(new Date(v.now).toISOString().slice(0, 16).replace('T', ' '))} ` +
      `UTC, at most once a minute.</p>`,
  ].join('')
  return htmlPage({ title: `Statistics of ${v.shortUrl}`, head: STATS_STYLE, body })
}
