// How many requests a second each source may send to one ingest process. A source that sends more
// is answered 429 with Retry-After, before its body is read when the key came in the header: one
// customer's flood costs the others neither Redis writes nor this process's CPU.

/** What the rate limit needs of a source. */
type RatedSource = { readonly id: string; readonly rateLimit?: number | undefined }

/** Requests a second a source may send to one process, unless `--rate-limit` or its own `rateLimit` says otherwise. */
export const DEFAULT_RATE_LIMIT = 500

/** What the limit says of one request. */
export interface Admission {
  /** 0: taken. Otherwise how long until this source's next request would be, in ms. */
  readonly waitMs: number
  /**
   * Requests of this source refused since the last report, once a second at most, on a refused
   * request: what to log, so that a flood of refusals writes a line a second, not a line a request.
   */
  readonly report?: number
}

const TAKEN: Admission = { waitMs: 0 }

/** Between two reports of a source's refusals, at least this long (ms). */
const REPORT_EVERY_MS = 1_000

/**
 * The request rate of each source: a source's requests are spaced `1000 / rate` ms apart on
 * average, with bursts of up to one second's worth (the generic cell rate algorithm: one number
 * per source, the time its next request is due). A rate of 0 is no limit.
 */
export class SourceRates {
  /** Per source id: when its next request is due, on the clock's scale. */
  readonly #due = new Map<string, number>()
  readonly #refused = new Map<string, { count: number; reportedAt: number }>()

  constructor(
    readonly defaultRate: number,
    readonly clock: () => number = () => performance.now(),
  ) {}

  /** Takes one request of `source`, or says how long it must wait. */
  admit(source: RatedSource): Admission {
    const rate = source.rateLimit ?? this.defaultRate
    if (rate === 0) return TAKEN
    const now = this.clock()
    const spacing = 1_000 / rate
    // A burst of one second's worth is let through at once: the due time may run that far ahead.
    const ahead = 1_000 - spacing
    const due = Math.max(this.#due.get(source.id) ?? now, now)
    if (due - now > ahead) return { waitMs: Math.ceil(due - now - ahead), ...this.#refusal(source.id, now) }
    this.#due.set(source.id, due + spacing)
    return TAKEN
  }

  /**
   * The refusals of each source not yet reported, taken: what a process logs once a second, so
   * that a burst's last refusals are told without waiting for the source's next one.
   */
  unreported(): Array<{ source: string; refused: number }> {
    const now = this.clock()
    const due: Array<{ source: string; refused: number }> = []
    for (const [source, refused] of this.#refused) {
      if (refused.count === 0) continue
      due.push({ source, refused: refused.count })
      refused.count = 0
      refused.reportedAt = now
    }
    return due
  }

  #refusal(id: string, now: number): { report?: number } {
    const refused = this.#refused.get(id)
    if (refused === undefined) {
      this.#refused.set(id, { count: 0, reportedAt: now })
      return { report: 1 }
    }
    refused.count++
    if (now - refused.reportedAt < REPORT_EVERY_MS) return {}
    const report = refused.count
    refused.count = 0
    refused.reportedAt = now
    return { report }
  }
}
