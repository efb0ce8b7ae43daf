import type { RateSchedule } from './url-policy.js'

/**
 * A token bucket: `perSecond` deliveries a second to one URL, in bursts of up to one second's
 * worth (at least one). The in-memory engine's {@link RateSchedule}, one per URL (the `url` it is
 * asked about is always its own). Times are on the caller's clock; it keeps no timer of its own.
 */
export class TokenBucket implements RateSchedule {
  readonly #perMs: number
  readonly #capacity: number
  #tokens: number
  #at: number

  constructor(perSecond: number, now: number) {
    this.#perMs = perSecond / 1000
    this.#capacity = Math.max(1, perSecond)
    this.#tokens = this.#capacity
    this.#at = now
  }

  /** Takes one delivery's token (0), or says how long until one comes (ms), taking nothing. */
  take(_url: string, now: number): number {
    this.#refill(now)
    // Stryker disable next-line EqualityOperator: at exactly one token the wait is ceil(0) = 0 either way.
    if (this.#tokens < 1) return Math.ceil((1 - this.#tokens) / this.#perMs)
    this.#tokens -= 1
    return 0
  }

  /** Puts back a token taken for a delivery that was not sent. */
  giveBack(): void {
    this.#tokens = Math.min(this.#capacity, this.#tokens + 1)
  }

  #refill(now: number): void {
    // Stryker disable next-line EqualityOperator: at the same instant the refill adds nothing.
    if (now > this.#at) {
      this.#tokens = Math.min(this.#capacity, this.#tokens + (now - this.#at) * this.#perMs)
      this.#at = now
    }
  }
}
