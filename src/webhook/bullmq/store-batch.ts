import type { EventToStore, StoreOutcome } from './store-once.js'

/** Most events in one transaction: Redis runs its script without serving anyone else meanwhile. */
export const MAX_EVENTS_PER_TRANSACTION = 1_000

interface Waiting {
  readonly events: readonly EventToStore[]
  readonly resolve: (outcomes: StoreOutcome[]) => void
  readonly reject: (error: unknown) => void
}

/**
 * Gathers the events of the calls made in one turn of the event loop into transactions of at
 * most {@link MAX_EVENTS_PER_TRANSACTION} events, all sent at once. A transaction is one script
 * call (`storeOnce`), which Redis runs whole: under load, many `enqueue()` calls cost Redis and
 * the client about what one `enqueueBulk()` of their events does.
 *
 * Transactions run in the order they were sent, on one connection: an id repeated in a later one
 * finds the earlier one's job, and answers `'duplicate'`. A caller whose events were in a
 * transaction that failed gets that transaction's error.
 */
export class StoreBatcher {
  readonly #store: (events: readonly EventToStore[]) => Promise<StoreOutcome[]>
  #waiting: Waiting[] = []

  /** @param store - Stores events in one transaction (`storeOnce`), answering per event. */
  constructor(store: (events: readonly EventToStore[]) => Promise<StoreOutcome[]>) {
    this.#store = store
  }

  /** Stores `events` with those of the other calls of this turn; resolves with their outcomes, in order. */
  store(events: readonly EventToStore[]): Promise<StoreOutcome[]> {
    return new Promise((resolve, reject) => {
      if (this.#waiting.push({ events, resolve, reject }) === 1) setImmediate(() => this.#flush())
    })
  }

  #flush(): void {
    const waiting = this.#waiting
    this.#waiting = []
    const all = waiting.flatMap((call) => call.events)
    const transactions: Promise<StoreOutcome[]>[] = []
    for (let start = 0; start < all.length; start += MAX_EVENTS_PER_TRANSACTION)
      transactions.push(this.#store(all.slice(start, start + MAX_EVENTS_PER_TRANSACTION)))
    void Promise.allSettled(transactions).then((settled) => {
      let offset = 0
      for (const call of waiting) {
        const first = Math.floor(offset / MAX_EVENTS_PER_TRANSACTION)
        const last = Math.floor((offset + call.events.length - 1) / MAX_EVENTS_PER_TRANSACTION)
        const mine = settled.slice(first, last + 1)
        const failed = mine.find((result) => result.status === 'rejected')
        if (failed) call.reject(failed.reason)
        else {
          const outcomes = mine.flatMap((result) => (result as PromiseFulfilledResult<StoreOutcome[]>).value)
          const skip = offset - first * MAX_EVENTS_PER_TRANSACTION
          call.resolve(outcomes.slice(skip, skip + call.events.length))
        }
        offset += call.events.length
      }
    })
  }
}
