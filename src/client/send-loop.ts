import type { ResolvedRetryOptions } from './options.js'
import { retryDelay, serverWait, type RateLimitPause } from './retry-policy.js'
import type { SendFailureCode } from './delivery-error.js'
import type { AttemptOutcome, SendResult } from './transport.js'

/** Told before each retry of a batch. */
export type RetryListener = (attempt: number, error: unknown) => void

/**
 * How a batch waits between its attempts, as the page it runs in allows: on a server a plain
 * timer; in a browser page (`PageKeepalive` in page-exit.ts) a wait that the page being hidden or
 * left may end early.
 */
export interface RetryWaits {
  /**
   * Whether the page is being left: a failed attempt then ends the send with `ERR_PAGE_LEFT`
   * instead of a retry (the page's timers may never fire, and the browser may already refuse
   * keepalive requests), for the client to keep the batch for the next page.
   */
  leaving(): boolean
  /**
   * Waits `ms` before the next attempt, `asked` of which is the server's (`Retry-After`), which
   * nothing cuts short. Resolves `true` to retry, `false` when the page is being left before the
   * server's wait is over (the send ends with `ERR_PAGE_LEFT`); rejects with the signal's reason
   * as soon as `signal` (close()'s deadline) aborts.
   */
  wait(ms: number, asked: number, signal: AbortSignal): Promise<boolean>
}

/** How one batch is sent. */
export interface SendOptions {
  /** close()'s deadline: once it fires, the batch ends with `ERR_CLOSE_TIMEOUT`. */
  readonly signal: AbortSignal
  readonly onRetry: RetryListener
  readonly waits: RetryWaits
}

/**
 * One attempt: sends the body once and sorts the answer (a transport's `attempt`). `signal` is
 * close()'s deadline: once it fires the attempt ends at once. Never rejects.
 */
export type Attempt = (signal: AbortSignal) => Promise<AttemptOutcome>

/**
 * The client's one retry loop, above every transport: runs attempts until one is delivered or
 * refused, the retry budget is spent or close()'s deadline fires, waiting between them as the
 * retry policy says and for any 429 pause before each. Tells `onRetry` just before each retry,
 * after its wait. Never rejects.
 */
export async function sendWithRetries(
  attempt: Attempt,
  { signal, onRetry, waits }: SendOptions,
  retry: ResolvedRetryOptions,
  pause: RateLimitPause,
): Promise<SendResult> {
  let attempts = 0
  let lastFailure: unknown
  const failed = (
    code: SendFailureCode,
    status: number | undefined,
    error: unknown,
  ): Extract<SendResult, { ok: false }> => ({
    ok: false,
    code,
    status,
    attempts,
    error,
  })
  for (let retries = 0; ; retries++) {
    // The pause is a wait like a retry's (the page's: a page being left keeps the batch), and
    // a server's wait, which hiding the page never cuts short.
    const paused = pause.remaining()
    try {
      if (paused > 0 && !(await waits.wait(paused, paused, signal)))
        return failed('ERR_PAGE_LEFT', undefined, lastFailure)
    } catch {
      return failed('ERR_CLOSE_TIMEOUT', undefined, lastFailure)
    }
    if (signal.aborted) return failed('ERR_CLOSE_TIMEOUT', undefined, lastFailure)
    attempts++
    const outcome = await attempt(signal)
    if (outcome.verdict === 'delivered') return { ok: true, status: outcome.status, attempts }
    if (outcome.verdict === 'reject')
      return { ...failed('ERR_REJECTED', outcome.status, outcome.error), responseText: outcome.responseText }
    if (outcome.verdict === 'invalid') return failed('ERR_INVALID_RESPONSE', undefined, outcome.error)
    // The deadline cut this attempt short: what it failed with says nothing of the endpoint.
    if (signal.aborted) return failed('ERR_CLOSE_TIMEOUT', undefined, lastFailure)
    const { status, error } = outcome
    const asked = serverWait(outcome, retry)
    const delay = retryDelay(asked, retries + 1, retry)
    // Even a batch out of retries passes the endpoint's word on to the others.
    if (status === 429) pause.extend(delay)
    if (waits.leaving()) return failed('ERR_PAGE_LEFT', status, error)
    if (retries === retry.limit) return failed('ERR_RETRIES_EXHAUSTED', status, error)
    lastFailure = error
    try {
      if (!(await waits.wait(delay, asked, signal))) return failed('ERR_PAGE_LEFT', status, error)
    } catch {
      return failed('ERR_CLOSE_TIMEOUT', undefined, lastFailure)
    }
    onRetry(retries + 1, error)
  }
}
