// A gate page posted back (password, captcha, consent): check what was sent, set the gate's cookie and send
// the visitor back to the link, query included, so the visitor's parameters reach the destination.
import { readBodyCapped } from '../../http/body'
import type { RedirectLink } from '../links'
import { gateCookie, type Captcha, type Gate, type Throttle } from './gates'
import { captchaPage, passwordPage, throttledPage } from './pages'

const FORM_LIMIT = 16 * 1024

async function readForm(request: Request): Promise<URLSearchParams | null> {
  const length = Number(request.headers.get('content-length') ?? 0)
  if (length > FORM_LIMIT) return null
  const bytes = await readBodyCapped(request, FORM_LIMIT).catch(() => null)
  return bytes && new URLSearchParams(new TextDecoder().decode(bytes))
}

export interface GatePostDeps {
  /** Signs the gate cookies. */
  cookieKey: Buffer
  /** Gate cookies are Secure when the service is served over https. */
  secure: boolean
  captcha: Captcha
  /** Keyed hash of a value: the password throttle counts per client address without keeping it. */
  keyed: (value: string) => string
  /** Failed password attempts (gateLimitsFor: this process's on SQLite, shared on PostgreSQL). */
  throttle: Throttle
}

export function createGatePost({ cookieKey, secure, captcha, keyed, throttle }: GatePostDeps) {
  return async function gatePost(link: RedirectLink, request: Request, url: URL, ip: string, now: number): Promise<Response> {
    const form = await readForm(request)
    const gate = form?.get('gate')
    const back = (g: Gate) =>
      new Response(null, {
        status: 303,
        headers: {
          location: `${url.pathname}${url.search}`,
          'set-cookie': gateCookie(cookieKey, g, link, now, secure),
          'cache-control': 'no-store',
          'x-robots-tag': 'noindex',
        },
      })
    if (gate === 'password' && link.passwordHash) {
      const throttleKey = `${link.id}|${keyed(`ip|${ip}`)}`
      // Counted before the (slow) hash check, so concurrent guesses cannot run past the limit.
      const wait = await throttle.attempt(throttleKey, now)
      if (wait) return throttledPage(wait)
      const password = form?.get('password') ?? ''
      if (password && password.length <= 128 && (await Bun.password.verify(password, link.passwordHash))) {
        await throttle.succeed(throttleKey)
        return back('pw')
      }
      const after = await throttle.blockedFor(throttleKey, now)
      return after ? throttledPage(after) : passwordPage(link.slug, { error: 'That password is not right. Try again.', query: url.search })
    }
    if (gate === 'captcha' && link.captchaEnabled) {
      if (await captcha.verify(form?.get('altcha') ?? '', now)) return back('cap')
      return captchaPage(link.slug, await captcha.challenge(now), 'The check did not pass. It will run again.', url.search)
    }
    if (gate === 'consent' && link.consentRequired) return back('ok')
    return new Response(null, { status: 303, headers: { location: `${url.pathname}${url.search}`, 'cache-control': 'no-store' } })
  }
}
