import { settlesWithin } from '../../core/timers.js'

/** What a queue's `counts()` gives that its gauges show (the fields of `QueueCounts`). */
export interface QueueCountsLike {
  readonly waiting: number
  readonly retrying: number
  readonly heldByBreaker: number
  readonly heldForSlots: number
  readonly active: number
  readonly failed: number
  readonly lateMs: number | undefined
  readonly oldestWaitingMs: number | undefined
  readonly urls: ReadonlyArray<{ readonly url: string; readonly heldByBreaker: number; readonly heldForSlots: number }>
}

/**
 * Reads a queue's counts for its gauges, with at most one read in flight: an exporter collects
 * every few seconds whatever Redis does, and a slow Redis must not be sent a new read on each
 * collection. A read not answered within `timeoutMs` is not waited for (that collection shows no
 * value, rather than an old one as if it were now); the next collection waits for the same read.
 */
export class CountsReader {
  readonly #counts: () => Promise<QueueCountsLike>
  readonly #timeoutMs: number
  #reading: Promise<QueueCountsLike | undefined> | undefined

  constructor(counts: () => Promise<QueueCountsLike>, timeoutMs: number) {
    this.#counts = counts
    this.#timeoutMs = timeoutMs
  }

  /** The counts, or `undefined` when they failed or did not come within the timeout. */
  async read(): Promise<QueueCountsLike | undefined> {
    this.#reading ??= this.#start()
    const reading = this.#reading
    return (await settlesWithin(reading, this.#timeoutMs)) ? reading : undefined
  }

  #start(): Promise<QueueCountsLike | undefined> {
    // A failed read (Redis down) shows as no value; the queue reports its Redis errors itself.
    return Promise.resolve()
      .then(this.#counts)
      .catch(() => undefined)
      .finally(() => {
        this.#reading = undefined
      })
  }
}
