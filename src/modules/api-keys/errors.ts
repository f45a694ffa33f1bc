// Every way managing keys is refused, by name (how a key is refused on a call is identity's: its errors.ts).
// Codes, messages and details are published: change them only as the contract allows (messages may change,
// codes and details not).
import { iso } from '../../platform/clock'
import { AppError, invalid, notFound, type ValidationIssue } from '../../platform/errors'
import type { Schedule } from '../identity/model'

// --- Managing keys ---------------------------------------------------------------------------------------

export const apiKeyNotFound = (id: string) => notFound(`API key ${id}`)

export const invalidKeySettings = (issues: ValidationIssue[]) => invalid('body', issues)

export const testKeyCreatesLiveKey = () => new AppError('forbidden', 'A test key can only create test keys')

/** A revoked key is kept for the record only; `consequence` says what that means for the change asked. */
export const keyIsRevoked = (consequence: string) => new AppError('conflict', `This key is revoked; ${consequence}`)

// A key manages only keys no wider than itself: each restriction it has, the keys it makes or changes keep.

export const cannotGrant = (notHeld: string[]) =>
  new AppError('forbidden', `A key cannot grant permissions it does not hold: ${notHeld.join(', ')}`, { notHeld })

export const widerAddresses = (allowedIps: string[]) =>
  new AppError('forbidden', 'This key is limited to some addresses; the keys it manages must stay within them', { allowedIps })

export const widerScope = (scopeFilters: { domains?: string[]; tags?: string[]; folders?: string[] }) =>
  new AppError('forbidden', 'This key has scope filters; the keys it manages must stay within them', { scopeFilters })

export const otherSchedule = (schedule: Schedule) =>
  new AppError('forbidden', 'This key has a schedule; the keys it manages keep the same schedule', { schedule })

export const higherCap = (monthlyCallCap: number) =>
  new AppError('forbidden', `This key is capped at ${monthlyCallCap} calls a month; the keys it manages cannot exceed that`)

export const fasterRate = (perMinute: number) =>
  new AppError('forbidden', `This key is limited to ${perMinute} requests a minute; the keys it manages cannot exceed that`)

export const outlivesCaller = (expiresAt: number) => new AppError('forbidden', `This key expires at ${iso(expiresAt)}; the keys it manages cannot outlive it`)

/** The target key is wider than the caller in the way `why` (one of the refusals above) says. */
export const cannotManageWider = (id: string, why: AppError) =>
  new AppError('forbidden', `This key cannot manage API key ${id}, which is wider than itself: ${why.message}`, why.details)
