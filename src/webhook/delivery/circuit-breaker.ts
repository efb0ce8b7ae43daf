/** Where a URL's circuit breaker stands: `open` spends no attempt on it; `half-open` lets one probe through. */
export type CircuitState = 'closed' | 'open' | 'half-open'

/** When a breaker opens and how long it stays open (resolved settings). */
export interface BreakerRules {
  /** The fewest failed attempts within the window that open the breaker. */
  readonly failures: number
  /** The share of the window's attempts that must have failed, too, in (0, 1]. */
  readonly failureRate: number
  /** How far back attempts count, in ms: the window slides, a tenth of it at a time. */
  readonly windowMs: number
  /** How long it stays open before one probe is let through, in ms. */
  readonly coolDownMs: number
}

/** The breaker's defaults, and the reasons for them in docs/webhooks.md. */
export const BREAKER_DEFAULTS: BreakerRules = { failures: 10, failureRate: 0.5, windowMs: 10_000, coolDownMs: 30_000 }

/** The window is counted in this many buckets: the oldest goes whole as time moves on. */
const BUCKETS = 10

/**
 * One URL's circuit breaker. It opens on evidence that the URL is down, not busy: within the last
 * `windowMs`, at least `failures` attempts failed, and they were at least `failureRate` of the
 * attempts. A receiver that fails every request opens it at its `failures`-th failure; one that
 * fails a few requests in twenty never does, however its failures clump (retries come due
 * together), since its successes fill the same window. While open, attempts to the URL wait
 * instead of being spent on it. After `coolDownMs` one attempt goes through as a probe: its
 * success closes the breaker and starts the window afresh, its failure opens it for another
 * cool-down. Which answers are failures is the policy's to say (`failsBreaker`, url-policy.ts);
 * any other counts as a success.
 *
 * Times are on the caller's clock; the breaker keeps no timer of its own.
 */
export class CircuitBreaker {
  readonly #rules: BreakerRules
  readonly #bucketMs: number
  #state: CircuitState = 'closed'
  #openUntil = 0
  #probing = false
  /** Each bucket's attempts and failures, and which bucket of the clock it holds (`now / bucketMs`, whole). */
  // Stryker disable next-line ArrayDeclaration: the window reads only slots #count has set, and fill reaches every one.
  readonly #attempts: number[] = new Array<number>(BUCKETS).fill(0)
  // Stryker disable next-line ArrayDeclaration: as above.
  readonly #failed: number[] = new Array<number>(BUCKETS).fill(0)
  // Stryker disable next-line ArrayDeclaration: as above; #forget's fill reaches every slot #count has set.
  readonly #held: number[] = new Array<number>(BUCKETS).fill(Number.NEGATIVE_INFINITY)

  constructor(rules: BreakerRules) {
    this.#rules = rules
    this.#bucketMs = Math.max(1, rules.windowMs / BUCKETS)
  }

  get state(): CircuitState {
    return this.#state
  }

  /** Until when (on the caller's clock) an open breaker stays open. */
  get openUntil(): number {
    return this.#openUntil
  }

  /**
   * Whether an attempt may start now: `'attempt'` (closed), `'probe'` (the one attempt let through
   * once the cool-down is over; the breaker turns `half-open`, which `changed` reports), or
   * `undefined` (wait: open, or a probe is out).
   */
  allows(now: number, changed: (state: CircuitState) => void): 'attempt' | 'probe' | undefined {
    if (this.#state === 'closed') return 'attempt'
    if (this.#state === 'open') {
      if (now < this.#openUntil) return undefined
      this.#state = 'half-open'
      changed('half-open')
    }
    if (this.#probing) return undefined
    this.#probing = true
    return 'probe'
  }

  /**
   * Takes on what another process decided, where breakers are shared (BullMQ workers): open
   * until `openUntil` when that is later than this breaker's own opening, or closed when
   * `openUntil` is `undefined` (nobody holds it open). `changed` hears of a change of state.
   */
  follow(openUntil: number | undefined, changed: (state: CircuitState) => void): void {
    if (openUntil === undefined) {
      if (this.#state === 'closed') return
      this.#forget()
      this.#probing = false
      this.#state = 'closed'
      changed('closed')
      return
    }
    // An opening this breaker already knows (its own, or one it followed) changes nothing.
    if (this.#state !== 'closed' && openUntil <= this.#openUntil) return
    const opened = this.#state !== 'open'
    this.#state = 'open'
    this.#openUntil = openUntil
    if (opened) changed('open')
  }

  /** Gives back a probe that was not sent: the next caller may probe instead. */
  releaseProbe(): void {
    this.#probing = false
  }

  /**
   * Counts an attempt's outcome (`probe`: it was the one {@link allows} let through); `changed`
   * hears of an opening or a closing. A success closes the breaker whatever the attempt; a failure
   * of an attempt that started before the breaker opened changes nothing more.
   */
  record(failed: boolean, probe: boolean, now: number, changed: (state: CircuitState) => void): void {
    if (probe) this.#probing = false
    if (!failed) {
      if (this.#state === 'closed') {
        this.#count(false, now)
        return
      }
      this.#forget()
      this.#probing = false
      this.#state = 'closed'
      changed('closed')
      return
    }
    const tripped = this.#down(this.#count(true, now))
    // A failed probe opens it again at once (unless a straggler's success closed it meanwhile);
    // closed, it takes the window's evidence; open, a straggler's failure changes nothing.
    const opens = this.#state === 'half-open' ? probe : this.#state === 'closed' && tripped
    if (opens) {
      this.#state = 'open'
      this.#openUntil = now + this.#rules.coolDownMs
      changed('open')
    }
  }

  /** Counts an attempt in the window at `now`; returns the bucket it went to. */
  #count(failed: boolean, now: number): number {
    const bucket = Math.floor(now / this.#bucketMs)
    const slot = ((bucket % BUCKETS) + BUCKETS) % BUCKETS
    if (this.#held[slot] !== bucket) {
      // A bucket a whole window old: its counts leave the window.
      this.#held[slot] = bucket
      this.#attempts[slot] = 0
      this.#failed[slot] = 0
    }
    this.#attempts[slot] = (this.#attempts[slot] as number) + 1
    if (failed) this.#failed[slot] = (this.#failed[slot] as number) + 1
    return bucket
  }

  /** Whether the window that ends with `bucket` says the URL is down. */
  #down(bucket: number): boolean {
    let attempts = 0
    let failures = 0
    for (let index = 0; index < BUCKETS; index++) {
      // Stryker disable next-line EqualityOperator: the slot of the bucket a window old is the current one, just reset.
      if ((this.#held[index] as number) <= bucket - BUCKETS) continue
      attempts += this.#attempts[index] as number
      failures += this.#failed[index] as number
    }
    return failures >= this.#rules.failures && failures >= this.#rules.failureRate * attempts
  }

  /** Starts the window afresh: what came before the breaker closed says nothing of now. */
  #forget(): void {
    this.#held.fill(Number.NEGATIVE_INFINITY)
  }
}
