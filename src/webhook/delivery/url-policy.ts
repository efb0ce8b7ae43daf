import type { Clock } from '../../core/clock.js'
import { CircuitBreaker, type BreakerRules, type CircuitState } from './circuit-breaker.js'
import type { WebhookResponse } from '../network/transport.js'
import type { AttemptFailure } from './failure.js'
import { attemptFailureOf } from './state.js'

/**
 * Whether an answer counts against its URL's breaker: the one rule, for both engines. A breaker
 * holds deliveries back from a URL that is down or broken, so what counts is evidence of that:
 *
 * - no answer in time, no connection (refused, reset, a name that does not resolve), an answer
 *   that is not HTTP, or a transport that threw: the receiver cannot be reached;
 * - an untrusted certificate: the receiver is reached but broken until its operator fixes it, and
 *   while the breaker is open, deliveries wait for that fix instead of failing one by one;
 * - a 5xx: the receiver is up and failing.
 *
 * What does not count: a 2xx, a 4xx or a 429 (the receiver is up: it accepted, refused, or asked
 * to slow down, which `Retry-After` handles), a blocked address (`blockPrivateNetworks`
 * refused it before any connection), and an egress proxy's own failure (nothing reached the
 * receiver): neither says anything of the receiver. A proxy that is down would otherwise open the
 * breaker of every URL behind it.
 */
export function failsBreaker(response: WebhookResponse): boolean {
  return response.ok ? response.status >= 500 : response.failure !== 'blocked' && response.failure !== 'proxy'
}

/** What a URL may do now: send an attempt, or the one probe of an open breaker. */
export type Permit = 'attempt' | 'probe'

/**
 * The policy's answer for one delivery to one URL now: send (`'attempt'` or `'probe'`), or wait.
 * A wait says what holds the URL back: its breaker until `until` (on the policy's clock), its rate
 * for `waitMs` more, or its slots, taken until one frees (the engine knows when that is).
 */
export type Admission =
  | { readonly kind: Permit }
  | {
      readonly kind: 'wait'
      readonly held: 'breaker'
      readonly until: number
      /** The failure that opened the breaker, where it is known: what a URL that ends held is said to have failed with. */
      readonly openedBy: AttemptFailure | undefined
    }
  | { readonly kind: 'wait'; readonly held: 'rate'; readonly waitMs: number }
  | { readonly kind: 'wait'; readonly held: 'slots' }

/** What {@link SharedCircuit.known} answers before a URL's first reading. */
export const UNREAD: unique symbol = Symbol('unread')

/**
 * Where a URL's breaker is kept beyond this process, for processes that share URLs (BullMQ
 * workers, in Redis). Times are on the policy's clock. In memory there is none: the breaker of
 * the one process is all there is.
 */
export interface SharedCircuit {
  /** Until when the shared breaker is open (`undefined`: nobody holds it open), as last read; {@link UNREAD} before a first reading. */
  known(url: string): number | undefined | typeof UNREAD
  /** The same, waiting for a reading. */
  read(url: string): Promise<number | undefined>
  /** Whether this process may send the one probe of the cool-down; `openUntil` when another's failed probe opened it again. */
  claimProbe(url: string): Promise<{ readonly claimed: boolean; readonly openUntil?: number | undefined }>
  /** This process's breaker opened, for `coolDownMs`, after `openedBy`. */
  open(url: string, coolDownMs: number, openedBy: AttemptFailure | undefined): void
  /** The failure that opened the shared breaker, as last read, where it is known. */
  openedBy(url: string): AttemptFailure | undefined
  /** This process's breaker closed. */
  close(url: string): void
}

/**
 * A URL's `ratePerUrl`: this process's token bucket, or one schedule shared by every worker.
 * `take` takes one delivery's turn when the rate allows it now (0), else says how many ms until
 * one may go, taking nothing.
 */
export interface RateSchedule {
  take(url: string, now: number): number | Promise<number>
  /** Gives back a turn taken for a delivery that was not sent, where the schedule can. */
  giveBack?(url: string): void
}

/** What one URL's policy is made of. */
export interface UrlPolicyRules {
  /** Attempts in flight to the URL at once, from this engine (a process). */
  readonly slots: number
  /** `undefined`: no breaker. */
  readonly breaker: BreakerRules | undefined
  /** An attempt's time limit: a probe out answers within it. */
  readonly timeoutMs: number
  readonly shared?: SharedCircuit | undefined
  readonly rate?: RateSchedule | undefined
  /** The clock of every time the policy reads, decides and answers. */
  readonly now: Clock
  /** Hears each change of the breaker's state, its own or followed from the shared one. */
  readonly circuit: (url: string, state: CircuitState) => void
  /**
   * Where deliveries wait for a slot (see {@link UrlPolicy.admit}'s `slotFreed`): gives a slot
   * being freed to the next of them, still counted in `inFlight` so that nobody takes it in
   * between; `false` when nobody waits.
   */
  readonly handOver?: (() => boolean) | undefined
}

/**
 * One URL's delivery policy, the same in both engines: whether a delivery may go now (its
 * breaker, then its slots, then its rate, in that order, each given back when a later one says
 * wait), and what an answer does to the URL ({@link failsBreaker}). The engines schedule around
 * it: the in-memory lanes queue what waits, the BullMQ worker sends it back to Redis for later.
 * Its state is a few numbers and the breaker; where the breaker is shared, {@link SharedCircuit}
 * is followed before each decision and told of this process's own changes.
 */
export class UrlPolicy {
  readonly url: string
  readonly breaker: CircuitBreaker | undefined
  /** Attempts in flight to the URL from this engine, each on one of its slots. */
  inFlight = 0
  readonly #rules: UrlPolicyRules
  /** Tells a change of this process's own breaker, and shares it. */
  readonly #own: (state: CircuitState) => void
  /** Tells a change followed from the shared breaker (not shared back). */
  readonly #followed: (state: CircuitState) => void
  /** The last answer that counted against the breaker, and the one that last opened it (this process's own). */
  #lastFailure: AttemptFailure | undefined
  #openedBy: AttemptFailure | undefined

  constructor(url: string, rules: UrlPolicyRules) {
    this.url = url
    this.#rules = rules
    this.breaker = rules.breaker && new CircuitBreaker(rules.breaker)
    this.#followed = (state) => rules.circuit(url, state)
    this.#own = (state) => {
      rules.circuit(url, state)
      if (state === 'open') {
        this.#openedBy = this.#lastFailure
        rules.shared?.open(url, (rules.breaker as BreakerRules).coolDownMs, this.#openedBy)
      } else if (state === 'closed') rules.shared?.close(url)
    }
  }

  get slots(): number {
    return this.#rules.slots
  }

  /** The breaker's state (`'closed'` without one). */
  get circuit(): CircuitState {
    return this.breaker?.state ?? 'closed'
  }

  /** Whether a slot is free now. */
  get hasSlot(): boolean {
    return this.inFlight < this.#rules.slots
  }

  /**
   * Whether a delivery may go to the URL now: a permit, with a slot taken and the rate's turn
   * taken; or what holds it back. Answered at once (no promise, so no turn of the microtask queue)
   * unless the shared breaker has not been read yet, a probe must be claimed from the other
   * processes, the shared rate must be asked, or `slotFreed` is waited for.
   *
   * @param slotFreed - Where the slots are all taken: waits for one to be handed over (`true`,
   *   counted already, see {@link UrlPolicyRules.handOver}) or gives up (`false`). Without it the answer is a
   *   wait for the slots.
   */
  admit(slotFreed?: () => Promise<boolean>): Admission | Promise<Admission> {
    const { breaker } = this
    if (breaker === undefined) return this.#slot('attempt', slotFreed)
    const shared = this.#rules.shared
    if (shared === undefined) return this.#decide(breaker, slotFreed)
    const known = shared.known(this.url)
    // Never read yet: the reading is waited for (a reading that failed reads as closed).
    if (known === UNREAD) return shared.read(this.url).then((openUntil) => this.#follow(breaker, openUntil, slotFreed))
    return this.#follow(breaker, known, slotFreed)
  }

  /** What the other processes decided comes first: followed, told to listeners, not shared back. */
  #follow(
    breaker: CircuitBreaker,
    openUntil: number | undefined,
    slotFreed: (() => Promise<boolean>) | undefined,
  ): Admission | Promise<Admission> {
    breaker.follow(openUntil, this.#followed)
    return this.#decide(breaker, slotFreed)
  }

  #decide(breaker: CircuitBreaker, slotFreed: (() => Promise<boolean>) | undefined): Admission | Promise<Admission> {
    const permit = breaker.allows(this.#rules.now(), this.#own)
    if (permit === undefined) return this.#heldByBreaker()
    const shared = this.#rules.shared
    if (permit === 'attempt' || shared === undefined) return this.#slot(permit, slotFreed)
    return shared.claimProbe(this.url).then(({ claimed, openUntil }) => {
      if (claimed) return this.#slot('probe', slotFreed)
      // Another process probes this cool-down, or its probe failed and opened the breaker again.
      breaker.releaseProbe()
      if (openUntil !== undefined) breaker.follow(openUntil, this.#followed)
      return this.#heldByBreaker()
    })
  }

  #slot(permit: Permit, slotFreed: (() => Promise<boolean>) | undefined): Admission | Promise<Admission> {
    if (this.inFlight < this.#rules.slots) {
      this.inFlight++
      return this.#rate(permit)
    }
    if (slotFreed === undefined) return this.#noSlot(permit)
    return slotFreed().then((handed) => {
      if (!handed) return this.#noSlot(permit)
      const breaker = this.breaker
      if (permit === 'attempt' && breaker !== undefined && breaker.state !== 'closed') {
        // The breaker opened while this delivery waited for its slot: the slot goes on, unused.
        this.#free()
        return this.#heldByBreaker()
      }
      return this.#rate(permit)
    })
  }

  #noSlot(permit: Permit): Admission {
    // Stryker disable next-line ConditionalExpression: an 'attempt' comes from a closed breaker, whose probe is not out.
    if (permit === 'probe') this.breaker?.releaseProbe()
    return { kind: 'wait', held: 'slots' }
  }

  #rate(permit: Permit): Admission | Promise<Admission> {
    const rate = this.#rules.rate
    if (rate === undefined) return { kind: permit }
    const wait = rate.take(this.url, this.#rules.now())
    return typeof wait === 'number' ? this.#rated(permit, wait) : wait.then((ms) => this.#rated(permit, ms))
  }

  #rated(permit: Permit, wait: number): Admission {
    if (wait <= 0) return { kind: permit }
    // Over the URL's rate: the slot and the probe go on, unused.
    this.#free()
    // Stryker disable next-line ConditionalExpression: an 'attempt' comes from a closed breaker, whose probe is not out.
    if (permit === 'probe') this.breaker?.releaseProbe()
    return { kind: 'wait', held: 'rate', waitMs: wait }
  }

  /**
   * Held back by the breaker: open, until its cool-down ends; half-open with the probe out, for
   * another cool-down at most, and no longer than an attempt can take (the probe's answer comes
   * by then, and a success must not leave the others waiting).
   */
  #heldByBreaker(): Admission {
    const breaker = this.breaker as CircuitBreaker
    const until =
      breaker.state === 'open'
        ? breaker.openUntil
        : this.#rules.now() + Math.min((this.#rules.breaker as BreakerRules).coolDownMs, this.#rules.timeoutMs)
    // Another process's opening, where the breaker is shared: it says what the URL did most lately.
    return { kind: 'wait', held: 'breaker', until, openedBy: this.#rules.shared?.openedBy(this.url) ?? this.#openedBy }
  }

  /**
   * An attempt sent with `permit` was answered with `response`: the breaker counts it (see
   * {@link failsBreaker}), and its slot is free again. `heard: false` for an attempt whose answer
   * nobody wanted any more (aborted by the engine): the breaker hears nothing against the URL.
   */
  answered(permit: Permit, response: WebhookResponse, heard = true): void {
    const breaker = this.breaker
    if (breaker !== undefined) {
      const failed = heard && failsBreaker(response)
      // Kept for the breaker's sake: the failure that opens it is told beside ERR_CIRCUIT_OPEN.
      // Only failures, so a 2xx costs nothing here.
      // Stryker disable next-line ConditionalExpression: the breaker opens only on an answer that fails it, which is the last kept either way.
      if (failed) this.#lastFailure = attemptFailureOf(response)
      breaker.record(failed, permit === 'probe', this.#rules.now(), this.#own)
    }
    this.#free()
  }

  /** A delivery admitted with `permit` was not sent after all: its slot, its probe and its rate's turn go back. */
  unused(permit: Permit): void {
    // Stryker disable next-line ConditionalExpression: an 'attempt' comes from a closed breaker, whose probe is not out.
    if (permit === 'probe') this.breaker?.releaseProbe()
    this.#rules.rate?.giveBack?.(this.url)
    this.#free()
  }

  /** Frees a slot: to a delivery waiting for it (see {@link UrlPolicyRules.handOver}), or back to the URL. */
  #free(): void {
    if (this.#rules.handOver?.() !== true) this.inFlight--
  }
}
