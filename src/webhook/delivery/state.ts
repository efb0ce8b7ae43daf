import { isRetryableStatus, retryAfterMs } from '../../core/retry-policy.js'
import { backoffDelay } from './callbacks.js'
import type { Clock } from '../../core/clock.js'
import { MAX_TIMER_MS } from '../../core/timers.js'
import type { AttemptFailure } from './failure.js'
import type { TransportFailure, WebhookResponse } from '../network/transport.js'
import type { WebhookErrorCode } from './webhook-error.js'

/**
 * Where one event stands at one URL.
 *
 * @typeParam E - What the target sends to: the engine's endpoint (a test's stand-in). Carried by
 * the target, so that no list has to be matched to the targets by position.
 */
export interface TargetState<E = unknown> {
  readonly endpoint: E
  status: 'pending' | 'delivered' | 'failed' | 'superseded' | 'skipped'
  attempts: number
  lastStatus: number | undefined
  failure: AttemptFailure | undefined
  retryAfterMs: number | undefined
  /**
   * When this URL's next attempt is due, where each URL keeps its own timeline (a worker's
   * round, see `runUrlRound`); unset: due now.
   */
  dueAt?: number | undefined
  /** What held this URL back the last time it was due and not sent to: its breaker, or its slots taken. */
  held?: 'breaker' | 'slots' | undefined
}

/** Where one event stands: what the engine keeps between rounds, wherever it is kept. */
export interface DeliveryState<E = unknown> {
  readonly eventId: string
  /**
   * No round starts after this, on the engine's clock ({@link RoundRules.now}): the first attempt
   * plus the retry window. Epoch ms where the state is stored (BullMQ); monotonic ms in memory.
   */
  readonly deadline: number
  rounds: number
  readonly targets: TargetState<E>[]
}

/** The rules a round follows. */
export interface RoundRules {
  readonly mode: 'any' | 'each'
  readonly backoff: (attempt: number) => number
  /**
   * The clock of deadlines and due times: monotonic in memory, so that a step of the wall clock
   * neither stretches a wait nor ends a window; Redis's where they are stored (BullMQ: see
   * `RedisClock`), so that every worker reads them on one clock.
   */
  readonly now: Clock
}

/** What to do after a round: report the event, or run another round at `dueAt` (on the rules' clock). */
export type RoundDecision =
  | { readonly kind: 'finished'; readonly delivered: boolean }
  | { readonly kind: 'retry'; readonly dueAt: number }

/** A fresh state: every endpoint waiting for its first attempt. */
export function newDeliveryState<E>(
  eventId: string,
  endpoints: readonly E[],
  retryWindowMs: number,
  now: number,
): DeliveryState<E> {
  return {
    eventId,
    deadline: now + retryWindowMs,
    rounds: 0,
    targets: endpoints.map((endpoint) => ({
      endpoint,
      status: 'pending',
      attempts: 0,
      lastStatus: undefined,
      failure: undefined,
      retryAfterMs: undefined,
    })),
  }
}

const FAILURE_CODES: Record<TransportFailure, WebhookErrorCode> = {
  tls: 'ERR_TLS_CERTIFICATE',
  timeout: 'ERR_TIMEOUT',
  network: 'ERR_NETWORK',
  blocked: 'ERR_BLOCKED_TARGET',
  proxy: 'ERR_PROXY',
}

/** Why an answer that is not a 2xx failed, as a target keeps it. */
export function attemptFailureOf(response: WebhookResponse): AttemptFailure {
  return response.ok
    ? { code: 'ERR_HTTP_STATUS', status: response.status }
    : { code: FAILURE_CODES[response.failure], cause: response.cause }
}

/**
 * Whether a URL whose attempt failed this way is tried again within the window: after a timeout, a
 * network error, an egress proxy's failure, or a status the shared rules retry (5xx, 408, 429:
 * core/retry-policy.ts).
 * Certificates and blocked addresses do not fix themselves within a retry window. What
 * {@link recordAttempt} follows, and what says a URL is failing rather than refusing one event.
 */
export function isRetriedFailure(failure: AttemptFailure): boolean {
  switch (failure.code) {
    case 'ERR_TIMEOUT':
    case 'ERR_NETWORK':
    // The proxy's failure says nothing of the receiver: the event waits for the proxy to recover.
    case 'ERR_PROXY':
      return true
    case 'ERR_HTTP_STATUS':
      return failure.status !== undefined && isRetryableStatus(failure.status)
    default:
      return false
  }
}

/**
 * Records one attempt's response: 2xx delivers; 5xx, 408, 429, timeouts and network errors wait
 * for a retry; the rest fail ({@link isRetriedFailure}). The attempt was counted when it was sent
 * (`attempts`: requests sent).
 */
export function recordAttempt(target: TargetState, response: WebhookResponse, now: number): void {
  target.retryAfterMs = undefined
  if (response.ok) {
    target.lastStatus = response.status
    if (response.status >= 200 && response.status < 300) {
      target.status = 'delivered'
      target.failure = undefined
      return
    }
  }
  const failure = attemptFailureOf(response)
  target.failure = failure
  if (!isRetriedFailure(failure)) target.status = 'failed'
  // The URL waits the longer of the receiver's Retry-After and its backoff.
  else if (response.ok) target.retryAfterMs = retryAfterMs(response.retryAfter, now, MAX_TIMER_MS)
}

/**
 * Whether the event counts as delivered: any URL in mode `'any'`, every URL in mode `'each'`. In
 * mode `'each'` a URL `'superseded'` (one a redeployed worker no longer lists) is not waited for.
 */
export function isDelivered(state: DeliveryState, mode: RoundRules['mode']): boolean {
  return mode === 'any'
    ? state.targets.some((target) => target.status === 'delivered')
    : state.targets.some((target) => target.status === 'delivered') &&
        state.targets.every((target) => target.status === 'delivered' || target.status === 'superseded')
}

/**
 * What a URL fails with when a callback failed it between attempts (`backoff` gave no usable
 * delay, or the signer could not sign its retry): its fault, keeping the URL's last status.
 */
export function callbackFailure(
  callback: 'backoff' | 'signer',
  cause: unknown,
  last: AttemptFailure | undefined,
): AttemptFailure {
  return {
    code: 'ERR_CALLBACK',
    callback,
    cause,
    ...(last?.status === undefined ? {} : { status: last.status }),
  }
}

/**
 * How long after its window's end an attempt may still start (ms): the last retry is due at the
 * window's end exactly, and a timer, a slot or a worker comes to it a little after. Past this
 * grace, nothing more is sent: in memory, a delivery that waited for a slot; on BullMQ, a round
 * whose job came back late.
 */
export const WINDOW_GRACE_MS = 1_000

/** When a retry `delay` ms after `now` is due: never past the longest timer, nor past `deadline`. */
function retryDueAt(now: number, delay: number, deadline: number): number {
  return Math.min(now + Math.min(delay, MAX_TIMER_MS), deadline)
}

/**
 * When a URL left pending by its answer (see {@link recordAttempt}) is tried again, on the
 * engine's clock: after its `backoff` for the attempt just made, or the receiver's `Retry-After`
 * when that is longer, and never past `deadline`. `undefined` when it ends instead, failed: its
 * window is spent (it keeps its last failure), or `backoff` gave no usable delay (`ERR_CALLBACK`).
 * The same for both engines.
 */
export function nextAttempt(
  target: TargetState,
  backoff: (attempt: number) => number,
  now: number,
  deadline: number,
): number | undefined {
  if (now >= deadline) {
    target.status = 'failed'
    return undefined
  }
  const delay = backoffDelay(backoff, target.attempts - 1)
  if (typeof delay !== 'number') {
    target.status = 'failed'
    target.failure = callbackFailure('backoff', delay.cause, target.failure)
    return undefined
  }
  return retryDueAt(now, Math.max(delay, target.retryAfterMs ?? 0), deadline)
}
