/** Seconds a rate is averaged over. */
const WINDOW_SECONDS = 10

/**
 * Events per second over the last ten seconds, in ten one-second buckets: constant memory and
 * no timer, whatever the rate.
 */
export class RateMeter {
  readonly #counts = new Float64Array(WINDOW_SECONDS)
  readonly #seconds = new Float64Array(WINDOW_SECONDS).fill(-1)
  readonly #startedAt: number

  constructor(now: number = Date.now()) {
    this.#startedAt = now
  }

  add(now: number = Date.now()): void {
    const second = Math.floor(now / 1000)
    const slot = second % WINDOW_SECONDS
    if (this.#seconds[slot] !== second) {
      this.#seconds[slot] = second
      this.#counts[slot] = 0
    }
    this.#counts[slot] = (this.#counts[slot] ?? 0) + 1
  }

  /** The average over the window, or over the time since start when that is shorter. */
  perSecond(now: number = Date.now()): number {
    const second = Math.floor(now / 1000)
    let total = 0
    for (let slot = 0; slot < WINDOW_SECONDS; slot++) {
      if (second - (this.#seconds[slot] ?? Number.NEGATIVE_INFINITY) < WINDOW_SECONDS) total += this.#counts[slot] ?? 0
    }
    const elapsed = Math.min(WINDOW_SECONDS, Math.max(1, (now - this.#startedAt) / 1000))
    return total / elapsed
  }
}
