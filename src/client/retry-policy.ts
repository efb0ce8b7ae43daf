import type { ResolvedRetryOptions } from './options.js'
import { isRetryableStatus, retryAfterMs } from '../core/retry-policy.js'

// The client's retry policy: which statuses are worth another attempt, how long to wait before
// it, and the pause a 429 puts on every request. The statuses and the reading of `Retry-After`
// are the webhook engine's too (core/retry-policy.ts); the retry loop (send-loop.ts) asks this
// module alone, whatever transport made the attempt.

/** What an answer means for the batch: accepted, worth another attempt, or refused for good. */
export type StatusVerdict = 'delivered' | 'retry' | 'reject'

/**
 * 2xx: delivered. 408, 429 and every 5xx: worth another attempt ({@link isRetryableStatus}).
 * Every other status (a redirect too: it is never followed) is final.
 */
export function statusVerdict(status: number): StatusVerdict {
  if (status >= 200 && status < 300) return 'delivered'
  return isRetryableStatus(status) ? 'retry' : 'reject'
}

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
  /** The answer's `Retry-After` header; `null` without one, or without an answer. */
  readonly retryAfter: string | null
}

/**
 * Milliseconds the answer's `Retry-After` asks to wait, capped at `maxRetryAfter`; 0 when it asks
 * for nothing that can be waited for (see {@link retryAfterMs}).
 */
export function serverWait(failed: FailedAttempt, retry: ResolvedRetryOptions): number {
  return retryAfterMs(failed.retryAfter, Date.now(), retry.maxRetryAfter) ?? 0
}

/**
 * Wait before retry number `retryNumber` (1-based): the backoff delay with jitter, or `asked`, the
 * answer's {@link serverWait}, when that is longer. The header can hold a retry back, never hurry
 * it: an invalid, zero or past one leaves the backoff as it is.
 */
export function retryDelay(asked: number, retryNumber: number, retry: ResolvedRetryOptions): number {
  return Math.max(jitter(backoffDelay(retryNumber, retry)), asked)
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

  /** How many ms of the pause are left: 0 when there is none. */
  remaining(): number {
    return Math.max(0, this.#until - Date.now())
  }
}
