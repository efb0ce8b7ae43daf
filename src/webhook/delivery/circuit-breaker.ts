/** Where a URL's circuit breaker stands: `open` spends no attempt on it; `half-open` lets one probe through. */
export type CircuitState = 'closed' | 'open' | 'half-open'

/** When a breaker opens and how long it stays open (resolved settings). */
export interface BreakerRules {
  /** Consecutive failures that open the breaker (what counts as one: `failsBreaker`, url-policy.ts). */
  readonly failures: number
  /** How long it stays open before one probe is let through, in ms. */
  readonly coolDownMs: number
}

/**
 * One URL's circuit breaker. A run of `failures` failed attempts in a row opens it: attempts to
 * the URL wait instead of being spent on a receiver that is down. After `coolDownMs` one attempt
 * goes through as a probe: its success closes the breaker, its failure opens it for another
 * cool-down. Which answers are failures is the policy's to say (`failsBreaker`, url-policy.ts);
 * any other counts as a success.
 *
 * Times are on the caller's clock; the breaker keeps no timer of its own.
 */
export class CircuitBreaker {
  readonly #rules: BreakerRules
  #state: CircuitState = 'closed'
  #failures = 0
  #openUntil = 0
  #probing = false

  constructor(rules: BreakerRules) {
    this.#rules = rules
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
      this.#failures = 0
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
      this.#failures = 0
      if (this.#state !== 'closed') {
        this.#probing = false
        this.#state = 'closed'
        changed('closed')
      }
      return
    }
    this.#failures++
    // A failed probe opens it again at once (unless a straggler's success closed it meanwhile);
    // closed, it takes a run of failures; open, a straggler's failure changes nothing.
    const opens =
      this.#state === 'half-open' ? probe : this.#state === 'closed' && this.#failures >= this.#rules.failures
    if (opens) {
      this.#state = 'open'
      this.#openUntil = now + this.#rules.coolDownMs
      changed('open')
    }
  }
}
