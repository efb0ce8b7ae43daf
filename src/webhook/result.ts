import { toWebhookError } from './failure.js'
import type { DeliveryState } from './round.js'
import type { WebhookError } from './webhook-error.js'

/** The fate of one event at one URL. `superseded`: another URL accepted the event first (mode `'any'`). */
export type WebhookUrlStatus = 'delivered' | 'failed' | 'superseded' | 'skipped'

/** What happened at one configured URL. */
export interface WebhookUrlResult {
  readonly url: string
  readonly status: WebhookUrlStatus
  /** Requests sent to this URL. */
  readonly attempts: number
  /** HTTP status of the last response, if any. */
  readonly lastStatus: number | undefined
  /** Why the last attempt failed, if it did. */
  readonly lastError: WebhookError | undefined
}

/** What `deliver()` resolves with once an event is processed, has finally failed, or was skipped. */
export interface DeliveryResult {
  /** `delivered`: accepted (by any URL in mode `'any'`, by every URL in mode `'each'`); `skipped`: `integrations` turned the destination off. */
  readonly status: 'delivered' | 'failed' | 'skipped'
  /** The event's `messageId`, or a generated UUID; sent as the `Webhook-Id` header. */
  readonly eventId: string
  /** Rounds of requests made (a round sends to every URL still waiting). */
  readonly attempts: number
  readonly urls: readonly WebhookUrlResult[]
}

/** Reports a state: one entry per configured URL, failures turned into errors. */
export function toDeliveryResult(
  state: DeliveryState,
  status: DeliveryResult['status'],
  urls: readonly string[],
  timeoutMs: number,
): DeliveryResult {
  return {
    status,
    eventId: state.eventId,
    attempts: state.rounds,
    urls: state.targets.map((target, index) => {
      const url = urls[index] ?? ''
      return {
        url,
        status: target.status === 'pending' ? 'failed' : target.status,
        attempts: target.attempts,
        lastStatus: target.lastStatus,
        lastError: target.failure && toWebhookError(target.failure, url, timeoutMs),
      }
    }),
  }
}

/** What `'retry'` listeners receive: a URL will be tried again at `retryAt`. */
export interface RetryNotice {
  readonly eventId: string
  readonly url: string
  /** Requests sent to this URL so far. */
  readonly attempts: number
  readonly error: WebhookError
  /** Epoch ms of the next attempt. */
  readonly retryAt: number
}

/** One notice per URL that will be tried again at `retryAt`. */
export function retryNotices(
  state: DeliveryState,
  urls: readonly string[],
  retryAt: number,
  timeoutMs: number,
): RetryNotice[] {
  const notices: RetryNotice[] = []
  state.targets.forEach((target, index) => {
    if (target.status !== 'pending' || !target.failure) return
    const url = urls[index] ?? ''
    notices.push({
      eventId: state.eventId,
      url,
      attempts: target.attempts,
      error: toWebhookError(target.failure, url, timeoutMs),
      retryAt,
    })
  })
  return notices
}

/** What `'attempt'` listeners receive: one request to one URL, and how it ended. */
export interface AttemptNotice {
  readonly eventId: string
  readonly url: string
  /** Requests sent to this URL so far, this one included. */
  readonly attempts: number
  /** The receiver answered 2xx. */
  readonly accepted: boolean
  /** HTTP status of this attempt's response, if one came. */
  readonly status: number | undefined
  /** Why this attempt failed, if it did. */
  readonly error: WebhookError | undefined
}

/** The URLs (by index) the next round sends to. */
export function pendingTargets(state: DeliveryState): number[] {
  const indices: number[] = []
  state.targets.forEach((target, index) => {
    if (target.status === 'pending') indices.push(index)
  })
  return indices
}

/** One notice per URL a round just sent to (`attempted`, from {@link pendingTargets} before the round). */
export function attemptNotices(
  state: DeliveryState,
  attempted: readonly number[],
  urls: readonly string[],
  timeoutMs: number,
): AttemptNotice[] {
  return attempted.map((index) => {
    // biome-ignore lint/style/noNonNullAssertion: `attempted` holds indexes of state.targets.
    const target = state.targets[index]!
    const url = urls[index] ?? ''
    const accepted = target.status === 'delivered'
    return {
      eventId: state.eventId,
      url,
      attempts: target.attempts,
      accepted,
      status: accepted ? target.lastStatus : target.failure?.status,
      error: !accepted && target.failure ? toWebhookError(target.failure, url, timeoutMs) : undefined,
    }
  })
}
