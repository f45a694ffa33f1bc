// The visitor-side checks a link may ask for: password, proof-of-work captcha (ALTCHA) and consent. Each
// one passed leaves a signed cookie scoped to the link's path, so the visitor is asked once. The password
// throttle and the captcha's spent solutions live in memory on SQLite (one process sees every visit) and in
// the database on PostgreSQL, so they hold across nodes.
import { createHmac } from 'node:crypto'
import { createChallenge, verifySolution } from 'altcha-lib/v1'
import { engineOf, onEngine, type Store } from '../../db/store'
import { createLimitsRepo, type LimitsRepo } from '../identity'
import { constantTimeEqual, sha256Hex } from '../../platform/random'
import { HOUR_MS, MINUTE_MS } from '../../platform/time'

export type Gate = 'pw' | 'cap' | 'ok'

const GATE_TTL_MS: Record<Gate, number> = { pw: 12 * HOUR_MS, cap: HOUR_MS, ok: 24 * HOUR_MS }

export const cookieName = (gate: Gate, linkId: string) => `lnk_${gate}_${linkId.replace(/-/g, '')}`

/** A version that changes when what the gate protects changes (a new password voids old cookies). */
const versionOf = (gate: Gate, passwordHash: string | null) => (gate === 'pw' ? sha256Hex(passwordHash ?? '').slice(0, 16) : '1')

function mac(key: Buffer, gate: Gate, linkId: string, version: string, expires: number) {
  return createHmac('sha256', key).update(`${gate}|${linkId}|${version}|${expires}`).digest('base64url')
}

export function gateCookie(key: Buffer, gate: Gate, link: { id: string; slug: string; passwordHash: string | null }, now: number, secure: boolean): string {
  const expires = now + GATE_TTL_MS[gate]
  const value = `${expires}.${mac(key, gate, link.id, versionOf(gate, link.passwordHash), expires)}`
  return (
    `${cookieName(gate, link.id)}=${value}; Path=/${encodeURIComponent(link.slug)}; Max-Age=${GATE_TTL_MS[gate] / 1000}; HttpOnly; ` +
    `SameSite=Lax${secure ? '; Secure' : ''}`
  )
}

export function hasGateCookie(key: Buffer, gate: Gate, link: { id: string; passwordHash: string | null }, cookieHeader: string | null, now: number): boolean {
  if (!cookieHeader) return false
  const name = cookieName(gate, link.id)
  for (const part of cookieHeader.split(';')) {
    const [k, v] = part.trim().split('=', 2)
    if (k !== name || !v) continue
    const [exp, sig] = v.split('.', 2)
    const expires = Number(exp)
    if (!Number.isFinite(expires) || expires <= now || !sig) return false
    return constantTimeEqual(sig, mac(key, gate, link.id, versionOf(gate, link.passwordHash), expires))
  }
  return false
}

const PASSWORD_ATTEMPTS = 5
const PASSWORD_WINDOW_MS = 15 * MINUTE_MS

const secondsUntil = (at: number, now: number) => Math.max(1, Math.ceil((at - now) / 1000))

/**
 * Failed password attempts per link and client: 5 per 15 minutes, then 429 until the window ends. Each
 * method answers at once in memory, or a Promise when the attempts are counted in the database.
 */
export interface Throttle {
  /** Seconds until the client may try again, or 0 when it may try now. */
  blockedFor(key: string, now: number): number | Promise<number>
  /**
   * Starts an attempt: answers the seconds to wait when the client is blocked, else counts the attempt
   * (before the password is checked, so concurrent guesses cannot run past the limit) and answers 0.
   * A right password then calls succeed(), which forgets the attempts.
   */
  attempt(key: string, now: number): number | Promise<number>
  succeed(key: string): void | Promise<void>
}

/** One process's attempts. */
export class PasswordThrottle implements Throttle {
  private attempts = new Map<string, { count: number; resetAt: number }>()
  constructor(
    private max = PASSWORD_ATTEMPTS,
    private windowMs = PASSWORD_WINDOW_MS,
  ) {}

  blockedFor(key: string, now: number): number {
    const a = this.attempts.get(key)
    if (!a || a.resetAt <= now) return 0
    return a.count >= this.max ? Math.ceil((a.resetAt - now) / 1000) : 0
  }

  attempt(key: string, now: number): number {
    const wait = this.blockedFor(key, now)
    if (wait) return wait
    this.fail(key, now)
    return 0
  }

  fail(key: string, now: number) {
    const a = this.attempts.get(key)
    if (!a || a.resetAt <= now) this.attempts.set(key, { count: 1, resetAt: now + this.windowMs })
    else a.count++
    if (this.attempts.size > 50_000) for (const [k, v] of this.attempts) if (v.resetAt <= now) this.attempts.delete(k)
  }

  succeed(key: string) {
    this.attempts.delete(key)
  }
}

/** The attempts of every node, counted in the database: an attempt is counted or refused in one statement. */
export class SharedPasswordThrottle implements Throttle {
  constructor(
    private repo: Pick<LimitsRepo, 'countAttempt' | 'attempts' | 'forgetAttempts'>,
    private max = PASSWORD_ATTEMPTS,
    private windowMs = PASSWORD_WINDOW_MS,
  ) {}

  async blockedFor(key: string, now: number): Promise<number> {
    const a = await this.repo.attempts(`pw|${key}`, now)
    return a && a.count >= this.max ? secondsUntil(a.resetAt, now) : 0
  }

  async attempt(key: string, now: number): Promise<number> {
    const a = await this.repo.countAttempt(`pw|${key}`, now, this.max, this.windowMs)
    return a.counted ? 0 : secondsUntil(a.resetAt, now)
  }

  async succeed(key: string) {
    await this.repo.forgetAttempts(`pw|${key}`)
  }
}

/** Captcha solutions already accepted, by signature, each until its challenge has expired. */
export interface SpentSolutions {
  /** True when the signature was not spent: it is spent from now until `expiresAt`. */
  spend(signature: string, expiresAt: number, now: number): boolean | Promise<boolean>
}

/** One process's spent solutions. */
export class SpentInMemory implements SpentSolutions {
  private used = new Map<string, number>()

  spend(signature: string, expiresAt: number, now: number): boolean {
    for (const [s, exp] of this.used) if (exp <= now) this.used.delete(s)
    if (this.used.has(signature)) return false
    this.used.set(signature, expiresAt)
    return true
  }
}

/** The throttle and the spent solutions of the engine served from: in memory on SQLite, shared on PostgreSQL. */
export interface GateLimits {
  throttle: Throttle
  spent: SpentSolutions
}

export function gateLimitsFor(store: Store): GateLimits {
  return onEngine<GateLimits>(
    store,
    () => ({ throttle: new PasswordThrottle(), spent: new SpentInMemory() }),
    (s) => {
      const repo = createLimitsRepo(engineOf(s))
      return { throttle: new SharedPasswordThrottle(repo), spent: { spend: (sig, exp, now) => repo.spendCaptcha(sig, exp, now) } }
    },
  )
}

/** ALTCHA proof-of-work: signed challenges, verified on the server, each solution accepted once. */
export class Captcha {
  constructor(
    private hmacKey: string,
    private spent: SpentSolutions,
    private maxNumber = 50_000,
    private ttlMs = 10 * MINUTE_MS,
  ) {}

  async challenge(now: number) {
    return createChallenge({ hmacKey: this.hmacKey, maxNumber: this.maxNumber, expires: new Date(now + this.ttlMs) })
  }

  /**
   * True once per valid, unexpired solution; a replayed one is refused. Expiry is judged by the caller's
   * clock (`now`), the same clock that set it in challenge(). A valid solution is then spent in one atomic
   * step (a Map in memory, one insert in the database), so the same payload sent many times at once, to one
   * node or several, passes at most once; a wrong one is never stored.
   */
  async verify(payload: string, now: number): Promise<boolean> {
    let solution: { algorithm: unknown; challenge: unknown; number: unknown; salt: unknown; signature: unknown }
    try {
      solution = JSON.parse(Buffer.from(payload, 'base64').toString('utf8'))
    } catch {
      return false
    }
    if (!solution || typeof solution !== 'object') return false
    const { algorithm, challenge, number, salt, signature } = solution
    // challenge() always issues SHA-256 challenges.
    if (algorithm !== 'SHA-256' || typeof challenge !== 'string' || typeof salt !== 'string' || typeof signature !== 'string' || !Number.isSafeInteger(number))
      return false
    const expires = Number(new URLSearchParams(salt.split('?')[1] ?? '').get('expires'))
    if (!Number.isFinite(expires) || expires <= 0 || expires * 1000 <= now) return false
    let ok = false
    try {
      ok = await verifySolution({ algorithm, challenge, number: number as number, salt, signature }, this.hmacKey, false)
    } catch {
      ok = false
    }
    // Spent until its challenge has expired for any clock: a replay after that fails the expiry check.
    return ok && (await this.spent.spend(signature, now + this.ttlMs, now))
  }
}
