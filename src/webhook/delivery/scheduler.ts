import { monotonicNow, type Clock } from '../../core/clock.js'
import { MAX_TIMER_MS } from '../../core/timers.js'
import type { Due, RetryStore } from './retry-store.js'

/**
 * Runs items of a {@link RetryStore} when they fall due, with one timer for the earliest item,
 * however many are waiting. The timer keeps the process alive while retries are pending, as the
 * requests themselves would. Due times are on `clock`: a monotonic one, so that a step of the
 * wall clock neither re-arms the timer for an hour nor runs every item at once.
 */
export class RetryScheduler<Item extends Due> {
  readonly #store: RetryStore<Item>
  readonly #run: (item: Item) => void
  readonly #clock: Clock
  #timer: ReturnType<typeof setTimeout> | undefined
  #timerAt = Number.POSITIVE_INFINITY

  constructor(store: RetryStore<Item>, run: (item: Item) => void, clock: Clock = monotonicNow) {
    this.#store = store
    this.#run = run
    this.#clock = clock
  }

  /** Items waiting. */
  get size(): number {
    return this.#store.size
  }

  schedule(item: Item): void {
    this.#store.add(item)
    if (item.dueAt < this.#timerAt) this.#arm(item.dueAt)
  }

  /** Takes `item` out before it falls due (the timer, if armed for it, finds nothing and re-arms). */
  cancel(item: Item): void {
    this.#store.remove(item)
  }

  /** Stops the timer and hands back every item still waiting. */
  stop(): Item[] {
    clearTimeout(this.#timer)
    this.#timer = undefined
    this.#timerAt = Number.POSITIVE_INFINITY
    return this.#store.takeAll()
  }

  #arm(at: number): void {
    clearTimeout(this.#timer)
    this.#timerAt = at
    this.#timer = setTimeout(() => this.#fire(), Math.min(Math.max(0, at - this.#clock()), MAX_TIMER_MS))
  }

  #fire(): void {
    this.#timer = undefined
    this.#timerAt = Number.POSITIVE_INFINITY
    const now = this.#clock()
    for (let next = this.#store.peek(); next !== undefined && next.dueAt <= now; next = this.#store.peek()) {
      this.#store.shift()
      this.#run(next)
    }
    const next = this.#store.peek()
    if (next !== undefined) this.#arm(next.dueAt)
  }
}
