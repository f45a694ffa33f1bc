// The pages a visitor of a short link may see instead of a redirect. Every value is escaped.
import type { LinkRow } from '../links/repo'
import { escapeHtml, htmlPage, scriptJson } from './html'

/** Where a gate page's form posts: the link's own path with the visitor's query (`?…` or ''). */
const formAction = (slug: string, query = '') => escapeHtml(`/${encodeURIComponent(slug)}${query}`)

export const notFoundPage = () =>
  htmlPage({ status: 404, title: 'Link not found', body: '<h1>Link not found</h1><p>This short link does not exist or is no longer active.</p>' })

export const gonePage = (reason: string) =>
  htmlPage({ status: 410, title: 'Link no longer available', body: `<h1>This link is no longer available</h1><p>${escapeHtml(reason)}</p>` })

export const sandboxPage = (link: LinkRow, destination: string) =>
  htmlPage({
    title: 'Test link',
    body: `<h1>Test link</h1><p>This link was created with a test key. Test links never redirect and record no clicks.</p><p>It would send visitors to:</p><p class="dest">${escapeHtml(destination)}</p><p class="muted">${escapeHtml(link.domain)}/${escapeHtml(link.slug)}</p>`,
  })

export const passwordPage = (slug: string, opts: { error?: string; status?: number; query?: string } = {}) =>
  htmlPage({
    status: opts.status ?? (opts.error ? 401 : 200),
    title: 'Password required',
    body: `<h1>Password required</h1><p>This link is protected. Enter its password to continue.</p>${opts.error ? `<p class="error" role="alert">${escapeHtml(opts.error)}</p>` : ''}<form method="post" action="${formAction(slug, opts.query)}"><input type="hidden" name="gate" value="password"><label for="pw">Password</label><input id="pw" name="password" type="password" required autocomplete="current-password" autofocus maxlength="128"><div class="actions"><button type="submit">Continue</button></div></form>`,
  })

export const throttledPage = (retryAfter: number) =>
  htmlPage({
    status: 429,
    title: 'Too many attempts',
    body: `<h1>Too many attempts</h1><p>Wait ${Math.ceil(retryAfter / 60)} minute(s) before trying the password again.</p>`,
    headers: { 'retry-after': String(retryAfter) },
  })

/** A proof-of-work page: the browser finds the number ALTCHA asks for and posts it back. */
export function captchaPage(slug: string, challenge: { algorithm: string; challenge: string; maxnumber?: number; salt: string; signature: string }, error?: string, query = '') {
  const script = `(async()=>{const c=${scriptJson(challenge)};const s=document.getElementById('status');const enc=new TextEncoder();
const hex=b=>Array.from(new Uint8Array(b),x=>x.toString(16).padStart(2,'0')).join('');
for(let n=0;n<=(c.maxnumber||1e6);n++){const h=hex(await crypto.subtle.digest('SHA-256',enc.encode(c.salt+n)));
if(h===c.challenge){document.getElementById('altcha').value=btoa(JSON.stringify({algorithm:c.algorithm,challenge:c.challenge,number:n,salt:c.salt,signature:c.signature}));s.textContent='Verified. Continuing…';document.getElementById('f').submit();return}}
s.textContent='Could not verify this browser. Reload the page to try again.'})()`
  return htmlPage({
    status: error ? 403 : 200,
    title: 'Checking your browser',
    body: `<h1>One moment</h1><p>This link checks that visitors are people. Your browser is solving a small puzzle; no data leaves it.</p>${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}<p id="status" role="status" aria-live="polite">Working…</p><form id="f" method="post" action="${formAction(slug, query)}"><input type="hidden" name="gate" value="captcha"><input type="hidden" id="altcha" name="altcha"><noscript><p>This check needs JavaScript.</p></noscript></form>`,
    script,
  })
}

export const consentPage = (slug: string, destination: string, query = '') =>
  htmlPage({
    title: 'You are leaving this site',
    body: `<h1>Continue to another site?</h1><p>This link leads to:</p><p class="dest">${escapeHtml(destination)}</p><form method="post" action="${formAction(slug, query)}"><input type="hidden" name="gate" value="consent"><div class="actions"><button type="submit">Continue</button><a class="button secondary" id="back" href="#">Go back</a></div></form>`,
    // A javascript: link would be blocked by the page's Content-Security-Policy; a listener is allowed.
    script: `document.getElementById('back').addEventListener('click',(e)=>{e.preventDefault();history.back()})`,
  })

/** What link-preview crawlers see: the link's Open Graph and Twitter card tags. */
export function previewPage(link: LinkRow, shortUrl: string, destination: string) {
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
    body: `<h1>${escapeHtml(title)}</h1>${description ? `<p>${escapeHtml(description)}</p>` : ''}<p><a href="${escapeHtml(destination)}">${escapeHtml(destination)}</a></p>`,
  })
}

/** Tries the app, then the web destination after a moment; both are also offered as links. */
export function deepLinkPage(appName: string, appHref: string, destination: string) {
  return htmlPage({
    title: `Opening ${appName}`,
    body: `<h1>Opening ${escapeHtml(appName)}…</h1><p>If nothing happens, continue in your browser.</p><div class="actions"><a class="button" href="${escapeHtml(appHref)}">Open in ${escapeHtml(appName)}</a><a class="button secondary" id="web" href="${escapeHtml(destination)}">Continue in browser</a></div>`,
    script: `(()=>{const app=${scriptJson(appHref)},web=${scriptJson(destination)};let left=false;document.addEventListener('visibilitychange',()=>{if(document.hidden)left=true});setTimeout(()=>{if(!left)location.replace(web)},1500);location.href=app})()`,
  })
}
