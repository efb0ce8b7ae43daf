import type { Endpoint } from '../network/endpoint.js'
import { toWebhookError, type AttemptFailure } from './failure.js'
import type { DeliveryState, TargetState } from './state.js'
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
  /** The destination the event was sent to (`enqueue()` or `deliver()` with `{ destination }`); absent for the engine's own `webhooks`. */
  readonly destination?: string | undefined
  /** Requests made to the URL that took the most. */
  readonly attempts: number
  readonly urls: readonly WebhookUrlResult[]
  /**
   * How long the event took, in ms: from `deliver()` (in memory) or `enqueue()` (BullMQ, on the
   * producer's clock) until it was delivered or failed for good. Absent for a skipped event.
   */
  readonly durationMs?: number | undefined
}

/**
 * Reports a state: one entry per configured URL, failures turned into errors; `durationMs` when
 * the engine knows when the event started.
 */
export function toDeliveryResult(
  state: DeliveryState<Endpoint>,
  status: DeliveryResult['status'],
  durationMs?: number,
  destination?: string,
): DeliveryResult {
  const urls = state.targets.map(urlResult)
  const { eventId } = state
  const attempts = state.rounds
  // Literals rather than spreads of optional fields: one object per result, not three.
  if (destination === undefined)
    return durationMs === undefined
      ? { status, eventId, attempts, urls }
      : { status, eventId, attempts, urls, durationMs }
  return durationMs === undefined
    ? { status, eventId, destination, attempts, urls }
    : { status, eventId, destination, attempts, urls, durationMs }
}

function urlResult(target: TargetState<Endpoint>): WebhookUrlResult {
  return {
    url: target.endpoint.url,
    status: target.status === 'pending' ? 'failed' : target.status,
    attempts: target.attempts,
    lastStatus: target.lastStatus,
    lastError: target.failure && toWebhookError(target.failure, target.endpoint),
  }
}

/** What `'retry'` listeners receive: a URL will be tried again at `retryAt`. */
export interface RetryNotice {
  readonly eventId: string
  /** The destination the event was sent to (`enqueue()` or `deliver()` with `{ destination }`); absent for the engine's own `webhooks`. */
  readonly destination?: string | undefined
  readonly url: string
  /** Requests sent to this URL so far. */
  readonly attempts: number
  readonly error: WebhookError
  /** Epoch ms of the next attempt. */
  readonly retryAt: number
}

/** One notice per URL that will be tried again at `retryAt`. */
export function retryNotices(state: DeliveryState<Endpoint>, retryAt: number, destination?: string): RetryNotice[] {
  const notices: RetryNotice[] = []
  for (const target of state.targets) {
    if (target.status !== 'pending' || !target.failure) continue
    // A URL on its own timeline (a worker's round) is due at its own time.
    notices.push(retryNotice(state.eventId, target, target.failure, target.dueAt ?? retryAt, destination))
  }
  return notices
}

/** The notice that `target`, which failed with `failure`, will be tried again at `retryAt`. */
export function retryNotice(
  eventId: string,
  target: TargetState<Endpoint>,
  failure: AttemptFailure,
  retryAt: number,
  destination?: string,
): RetryNotice {
  return {
    eventId,
    ...(destination === undefined ? {} : { destination }),
    url: target.endpoint.url,
    attempts: target.attempts,
    error: toWebhookError(failure, target.endpoint),
    retryAt,
  }
}

/** What `'attempt'` listeners receive: one request to one URL, and how it ended. */
export interface AttemptNotice {
  readonly eventId: string
  /** The destination the event was sent to (`enqueue()` or `deliver()` with `{ destination }`); absent for the engine's own `webhooks`. */
  readonly destination?: string | undefined
  readonly url: string
  /** Requests sent to this URL so far, this one included. */
  readonly attempts: number
  /** The receiver answered 2xx. */
  readonly accepted: boolean
  /** HTTP status of this attempt's response, if one came. */
  readonly status: number | undefined
  /** Why this attempt failed, if it did. */
  readonly error: WebhookError | undefined
  /** How long the request took, in ms: from sending it until its answer, or its failure. */
  readonly durationMs?: number | undefined
}

/** The notice of the request just answered at `target`, which holds its outcome; it took `durationMs`. */
export function attemptNotice(
  eventId: string,
  target: TargetState<Endpoint>,
  durationMs?: number,
  destination?: string,
): AttemptNotice {
  const accepted = target.status === 'delivered'
  return {
    eventId,
    ...(destination === undefined ? {} : { destination }),
    url: target.endpoint.url,
    attempts: target.attempts,
    accepted,
    status: accepted ? target.lastStatus : target.failure?.status,
    error: !accepted && target.failure ? toWebhookError(target.failure, target.endpoint) : undefined,
    ...(durationMs === undefined ? {} : { durationMs }),
  }
}
