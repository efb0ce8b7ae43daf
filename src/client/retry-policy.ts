import type { ResolvedRetryOptions } from './options.js'
import { parseRetryAfter } from '../core/retry-after.js'
import { sleep } from '../core/timers.js'

// The client's retry policy: which statuses are worth another attempt, how long to wait before
// it, and the pause a 429 puts on every request. Both transports (ky over `fetch`, undici's `Pool`
// on Node) run their attempts through sendWithRetries (send-loop.ts), which asks this module
// alone, so that the two cannot drift apart.

/** What an answer means for the batch: accepted, worth another attempt, or refused for good. */
export type StatusVerdict = 'delivered' | 'retry' | 'reject'

/**
 * 2xx: delivered. 408, 429 and every 5xx: worth another attempt. Every other status (a redirect
 * too: it is never followed) is final.
 */
export function statusVerdict(status: number): StatusVerdict {
  if (status >= 200 && status < 300) return 'delivered'
  return status === 408 || status === 429 || (status >= 500 && status < 600) ? 'retry' : 'reject'
}

/** Statuses whose `Retry-After` is honoured: the server says when to come back. */
const RETRY_AFTER_STATUSES = new Set([429, 503])

/** Each backoff delay is multiplied by a random factor in [JITTER_MIN, JITTER_MAX]. */
export const JITTER_MIN = 0.8
const JITTER_MAX = 1.2

function jitter(delay: number): number {
  return delay * (JITTER_MIN + Math.random() * (JITTER_MAX - JITTER_MIN))
}

/** Delay before retry number `retryNumber` (1-based), before jitter: doubling from `baseDelay`, capped at `maxDelay`. */
export function backoffDelay(retryNumber: number, retry: ResolvedRetryOptions): number {
  return Math.min(retry.maxDelay, retry.baseDelay * 2 ** (retryNumber - 1))
}

/** What the retry policy reads from a failed attempt. */
export interface FailedAttempt {
  /** The status of the answer; `undefined` when there was none (network error, timeout). */
  readonly status: number | undefined
  /** The answer's `Retry-After` header, if any. */
  readonly retryAfter: string | null
}

/**
 * Wait before retry number `retryNumber` (1-based) of an attempt that failed so: the `Retry-After`
 * of a 429 or 503 (seconds or an HTTP date), capped at `maxRetryAfter` and without jitter, since
 * the server named the time; otherwise the backoff delay with jitter.
 */
export function retryDelay(failed: FailedAttempt, retryNumber: number, retry: ResolvedRetryOptions): number {
  if (failed.status !== undefined && RETRY_AFTER_STATUSES.has(failed.status)) {
    const asked = parseRetryAfter(failed.retryAfter, Date.now())
    if (asked !== undefined) return Math.min(asked, retry.maxRetryAfter)
  }
  return jitter(backoffDelay(retryNumber, retry))
}

/**
 * The pause a 429 puts on every request of one transport, new batches and retries alike: the
 * endpoint said it is overwhelmed, and one batch backing off while the others keep coming would
 * not relieve it.
 */
export class RateLimitPause {
  #until = 0

  /** After a 429: nothing is sent before `delay` ms from now (a longer pause already set stands). */
  extend(delay: number): void {
    this.#until = Math.max(this.#until, Date.now() + delay)
  }

  /**
   * Resolves once the pause is over (at once when there is none); rejects with the signal's reason
   * as soon as `signal` aborts, or at once if it already has.
   */
  async waitOut(signal: AbortSignal): Promise<void> {
    const wait = this.#until - Date.now()
    if (wait > 0) await sleep(wait, signal)
    else if (signal.aborted) throw signal.reason
  }
}
