/** Entries held before the first sweep: the sweep runs again once they are twice as many as it left. */
export const ENTRIES_BEFORE_SWEEP = 1_024

/**
 * A map of state kept per key (a URL, an origin) whose idle entries go once it has grown: when it
 * holds twice the entries the last sweep left (and at least {@link ENTRIES_BEFORE_SWEEP}), the
 * next {@link sweepIfGrown} drops every entry `idle` says holds nothing. So a process that meets
 * 50,000 URLs once each holds the few that have work, not all it ever met, and sweeping costs
 * O(1) per entry made. The owner calls `sweepIfGrown` where no entry it just took is in use
 * without being held yet.
 */
export class SweptMap<K, V> {
  readonly #entries = new Map<K, V>()
  readonly #idle: (value: V) => boolean
  readonly #first: number
  #sweepAt: number

  /**
   * @param idle - Whether an entry holds nothing worth keeping: made again when next needed, it would behave the same.
   * @param first - Entries held before the first sweep.
   */
  constructor(idle: (value: V) => boolean, first = ENTRIES_BEFORE_SWEEP) {
    this.#idle = idle
    this.#first = first
    this.#sweepAt = first
  }

  get size(): number {
    return this.#entries.size
  }

  get(key: K): V | undefined {
    return this.#entries.get(key)
  }

  set(key: K, value: V): void {
    this.#entries.set(key, value)
  }

  delete(key: K): boolean {
    return this.#entries.delete(key)
  }

  values(): IterableIterator<V> {
    return this.#entries.values()
  }

  clear(): void {
    this.#entries.clear()
  }

  /** Drops the idle entries if the map has doubled since the last sweep. */
  sweepIfGrown(): void {
    // Stryker disable next-line EqualityOperator: sweeping at that size or one entry later holds as many entries, within one.
    if (this.#entries.size < this.#sweepAt) return
    for (const [key, value] of this.#entries) if (this.#idle(value)) this.#entries.delete(key)
    this.#sweepAt = Math.max(this.#first, this.#entries.size * 2)
  }
}
