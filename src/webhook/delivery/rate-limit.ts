/**
 * A token bucket: `perSecond` deliveries a second to one URL, in bursts of up to one second's
 * worth (at least one). Times are on the caller's clock; it keeps no timer of its own.
 */
export class TokenBucket {
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

  /** How long until a delivery may go (0: now), without taking anything. */
  wait(now: number): number {
    this.#refill(now)
    // Stryker disable next-line EqualityOperator: at exactly one token the wait is ceil(0) = 0 either way.
    return this.#tokens >= 1 ? 0 : Math.ceil((1 - this.#tokens) / this.#perMs)
  }

  /** Takes one delivery's token; call only after {@link wait} said 0. */
  take(): void {
    this.#tokens -= 1
  }

  #refill(now: number): void {
    // Stryker disable next-line EqualityOperator: at the same instant the refill adds nothing.
    if (now > this.#at) {
      this.#tokens = Math.min(this.#capacity, this.#tokens + (now - this.#at) * this.#perMs)
      this.#at = now
    }
  }
}
