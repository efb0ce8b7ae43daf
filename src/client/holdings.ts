/** The memory bounds a {@link Holdings} enforces (resolved client options). */
export interface HoldingLimits {
  /** Most messages held at once. */
  readonly maxQueueSize: number
  /** Most message bytes held at once. */
  readonly maxQueueBytes: number
  /** Bytes held at which calls start returning `false`. */
  readonly highWaterBytes: number
}

/**
 * What the client holds (queued, in flight and retrying) against its bounds, and the backpressure
 * signal that follows from it.
 *
 * - A message is refused when it would take the count past `maxQueueSize` or the bytes past
 *   `maxQueueBytes`; what is already held is never touched.
 * - Backpressure starts (calls return `false`) when the count reaches half of `maxQueueSize` or the
 *   bytes reach `highWaterBytes`, so a producer that honours it never meets the hard bound.
 * - It ends (`'drain'`) only when the count is back to a quarter of `maxQueueSize` and the bytes to
 *   half of `highWaterBytes`: the gap means a waiting producer gets a run of room, instead of a
 *   `'drain'` and a `false` for every batch that settles.
 */
export class Holdings {
  readonly #limits: HoldingLimits
  #messages = 0
  #bytes = 0
  #needDrain = false

  constructor(limits: HoldingLimits) {
    this.#limits = limits
  }

  /** Messages held. */
  get messages(): number {
    return this.#messages
  }

  /** Whether backpressure is on: set by {@link admit}, cleared by {@link drained}. */
  get needDrain(): boolean {
    return this.#needDrain
  }

  /** Counts a message of `bytes` in, or refuses it (`false`, and backpressure on) when it would pass a bound. */
  admit(bytes: number): boolean {
    const limits = this.#limits
    if (this.#messages >= limits.maxQueueSize || this.#bytes + bytes > limits.maxQueueBytes) {
      this.#needDrain = true
      return false
    }
    this.#messages++
    this.#bytes += bytes
    if (this.#messages * 2 >= limits.maxQueueSize || this.#bytes >= limits.highWaterBytes) this.#needDrain = true
    return true
  }

  /** Counts settled messages out (delivered or failed). */
  release(messages: number, bytes: number): void {
    this.#messages -= messages
    this.#bytes -= bytes
  }

  /** `true` once, when backpressure was on and holdings fell low enough to end it: emit `'drain'` then. */
  drained(): boolean {
    const limits = this.#limits
    if (!this.#needDrain || this.#messages * 4 > limits.maxQueueSize || this.#bytes * 2 > limits.highWaterBytes)
      return false
    this.#needDrain = false
    return true
  }
}
