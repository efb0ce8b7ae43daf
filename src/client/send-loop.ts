import type { ResolvedRetryOptions } from './options.js'
import { retryDelay, type RateLimitPause } from './retry-policy.js'
import type { SendOptions, SendResult } from './transport.js'

/**
 * How one HTTP attempt ended, as a transport reports it: the status sorted by
 * `statusVerdict`, and anything that is not an answer (a network error, the attempt's
 * timeout, close()'s deadline) as `retry` with no status.
 */
export type AttemptOutcome =
  | { readonly verdict: 'delivered'; readonly status: number }
  | {
      readonly verdict: 'reject'
      readonly status: number
      /** An error naming the status, the method and the URL. */
      readonly error: unknown
      /** The start of the response body (see `bodyExcerpt` in src/core/body-excerpt.ts). */
      readonly responseText: string | undefined
    }
  | {
      readonly verdict: 'retry'
      readonly status: number | undefined
      readonly retryAfter: string | null
      readonly error: unknown
    }

/**
 * An attempt that got no answer (a network error, close(), or its deadline), worth another one.
 * At the deadline the error is the deadline's reason, a `TimeoutError` naming the limit, rather
 * than whatever the aborted request threw.
 */
export function noAnswer(
  error: unknown,
  deadline: { expired(): boolean; readonly signal: { readonly reason: unknown } },
): AttemptOutcome {
  return {
    verdict: 'retry',
    status: undefined,
    retryAfter: null,
    error: deadline.expired() ? deadline.signal.reason : error,
  }
}

/**
 * One attempt: sends the body once and sorts the answer. `signal` is close()'s deadline: once it
 * fires the attempt ends at once. Never rejects.
 */
export type Attempt = (signal: AbortSignal) => Promise<AttemptOutcome>

/**
 * Waits `ms` before a retry, or less: until `signal` aborts (a rejection), or until a wake in
 * `waking` is called (a browser page being left: the retry goes now, with `keepalive`, rather
 * than never).
 */
function backoff(ms: number, signal: AbortSignal, waking: Set<() => void> | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason)
      return
    }
    const settle = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', onAbort)
      waking?.delete(wake)
    }
    const wake = () => {
      settle()
      resolve()
    }
    const onAbort = () => {
      settle()
      reject(signal.reason)
    }
    const timer = setTimeout(wake, ms)
    signal.addEventListener('abort', onAbort, { once: true })
    waking?.add(wake)
  })
}

/**
 * Runs attempts until one is delivered or refused, the retry budget is spent or close()'s deadline
 * fires, waiting between them as the retry policy says and for any 429 pause before each. Tells
 * `onRetry` just before each retry, after its wait. Never rejects.
 */
export async function sendWithRetries(
  attempt: Attempt,
  { signal, onRetry, waking, leaving }: SendOptions,
  retry: ResolvedRetryOptions,
  pause: RateLimitPause,
): Promise<SendResult> {
  let attempts = 0
  let lastFailure: unknown
  const closeTimeout = (): SendResult => ({
    ok: false,
    code: 'ERR_CLOSE_TIMEOUT',
    status: undefined,
    attempts,
    error: lastFailure,
  })
  for (let retries = 0; ; retries++) {
    try {
      await pause.waitOut(signal)
    } catch {
      return closeTimeout()
    }
    attempts++
    const outcome = await attempt(signal)
    if (outcome.verdict === 'delivered') return { ok: true, status: outcome.status, attempts }
    if (outcome.verdict === 'reject') {
      const { status, error, responseText } = outcome
      return { ok: false, code: 'ERR_REJECTED', status, attempts, error, responseText }
    }
    // The deadline cut this attempt short: what it failed with says nothing of the endpoint.
    if (signal.aborted) return closeTimeout()
    const delay = retryDelay(outcome, retries + 1, retry)
    // Even a batch out of retries passes the endpoint's word on to the others.
    if (outcome.status === 429) pause.extend(delay)
    if (leaving?.()) {
      return { ok: false, code: 'ERR_PAGE_LEFT', status: outcome.status, attempts, error: outcome.error }
    }
    if (retries === retry.limit) {
      return { ok: false, code: 'ERR_RETRIES_EXHAUSTED', status: outcome.status, attempts, error: outcome.error }
    }
    lastFailure = outcome.error
    try {
      await backoff(delay, signal, waking)
    } catch {
      return closeTimeout()
    }
    onRetry(retries + 1, outcome.error)
  }
}
