// The retry rules the client and the webhook engine share: which statuses are worth another
// attempt, and how long a `Retry-After` header holds the next one back. Each half keeps its own
// backoff (the client's per batch, the webhook engine's per round); both wait the longer of that
// backoff and the header, so a header never shortens a wait.

/**
 * Whether an answer with this status is worth another attempt: 408, 429 and every 5xx. A 2xx is
 * delivered; every other status (a redirect too) is final, and so is a status past 599, which
 * HTTP defines no class for.
 *
 * @example
 * ```ts
 * isRetryableStatus(503) // true
 * isRetryableStatus(404) // false
 * ```
 */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status < 600)
}

/** delay-seconds: `1*DIGIT` (RFC 9110), nothing else. A sign, a fraction or `0x10` is not one. */
const SECONDS = /^\d+$/
/** Every HTTP-date form (IMF-fixdate, RFC 850, asctime) starts with the day's name. */
const HTTP_DATE = /^[A-Z][a-z]{2}/

/**
 * Milliseconds a `Retry-After` header holds the next attempt back: delay-seconds or an HTTP date,
 * at most `cap`. `undefined` when there is nothing to wait for: no header, one that is not valid
 * syntax (negative, fractional, hexadecimal, any other text), zero, or a date that is not in the
 * future (a server clock behind ours makes every date a past one). The caller then waits its
 * backoff delay, as it waits the longer of the two otherwise.
 *
 * @example
 * ```ts
 * retryAfterMs('120', Date.now(), 60_000) // 60_000: capped
 * retryAfterMs('-30', Date.now(), 60_000) // undefined: the backoff applies
 * ```
 */
export function retryAfterMs(value: string | null, now: number, cap: number): number | undefined {
  // Stryker disable next-line StringLiteral: no header reads as any text that is neither a delay nor a date.
  const text = value?.trim() ?? ''
  const ms = SECONDS.test(text) ? Number(text) * 1000 : HTTP_DATE.test(text) ? Date.parse(text) - now : Number.NaN
  // NaN (unreadable) fails this test too.
  return ms > 0 ? Math.min(ms, cap) : undefined
}
