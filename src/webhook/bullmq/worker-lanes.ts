import { Queue } from '../../core/queue.js'
import { CircuitBreaker, type BreakerRules, type CircuitState } from '../delivery/circuit-breaker.js'
import type { Admission } from '../delivery/url-round.js'
import { type SharedBreakers, UNREAD } from './shared-breakers.js'
import type { SharedRates } from './shared-rates.js'

/**
 * How long a job waits for a slot of a URL whose attempts end quickly (ms). Past that, or at once
 * when the URL's attempts are known to take longer, the job leaves that URL's delivery for later
 * and frees its worker slot.
 */
export const LANE_WAIT_MS = 100

/** How far ahead jobs left by a URL whose slots are taken are scheduled in turn (ms); later ones come back together. */
export const RETURN_HORIZON_MS = 60_000

/** Where a job waits for a slot: resolved with the slot, or with `false` when it stops waiting. */
interface Waiter {
  settled: boolean
  readonly resolve: (slot: boolean) => void
}

/** One URL's share of this worker process: its attempts in flight, how long they take, its breaker. */
class WorkerLane {
  inFlight = 0
  /** When each attempt in flight started, in the order they started: the first is the oldest. */
  readonly starts = new Map<number, number>()
  /** How long this URL's attempts have taken lately (ms), once one has ended. */
  took: number | undefined
  readonly waiters = new Queue<Waiter>()
  readonly breaker: CircuitBreaker | undefined
  /** The earliest a job left because the slots were taken may come back: see `#returnTime`. */
  nextReturn = 0

  constructor(breaker: BreakerRules | undefined) {
    this.breaker = breaker && new CircuitBreaker(breaker)
  }

  /** How long a slot of this URL is likely to stay taken: the longer of its recent attempts and its oldest one in flight. */
  expectedWait(now: number): number {
    const oldest = this.starts.values().next()
    return Math.max(this.took ?? 0, oldest.done ? 0 : now - oldest.value)
  }
}

/** One URL as one worker process sees it: see `WebhookWorker.backlog()`. */
export interface WorkerUrlState {
  readonly url: string
  /** Attempts to the URL this process has in flight. */
  readonly inFlight: number
  /** The URL's slots in this process. */
  readonly slots: number
  /** Jobs of this process waiting a moment for one of the URL's slots. */
  readonly waiting: number
  /** The URL's breaker as this process last saw it (`'closed'` without a breaker). */
  readonly circuit: CircuitState
}

/** What the lanes are sized and timed by. */
export interface WorkerLaneRules {
  /** Attempts in flight to one URL from this process. */
  readonly slotsPerUrl: number
  /** One attempt's time limit (ms): nothing waits for a slot longer than an attempt can take. */
  readonly timeoutMs: number
  readonly breaker: BreakerRules | undefined
  /** Hears of each breaker's changes. */
  readonly circuit: (url: string, state: CircuitState) => void
  readonly now: () => number
  /** The breakers every worker of the queue shares, if any: followed, written on change, and who probes. */
  readonly shared?: SharedBreakers | undefined
  /** `ratePerUrl` for every worker of the queue together, if set. */
  readonly rates?: Pick<SharedRates, 'take' | 'interval'> | undefined
  /** In [0, 1): spreads the return of jobs that left the same URL at the same moment. */
  readonly random: () => number
}

/**
 * The per-URL lanes of one worker process. A job's attempt to a URL takes one of that URL's
 * `slotsPerUrl` slots; when they are all taken by attempts that take long (a receiver that is
 * silent or slow), the job does not wait for them: it leaves that URL for later (the job goes
 * back to Redis as delayed) and frees its worker slot for other URLs' deliveries. So a bad URL
 * holds at most its own slots of the worker, never the others'.
 */
export class WorkerLanes {
  readonly #rules: WorkerLaneRules
  readonly #lanes = new Map<string, WorkerLane>()
  #tickets = 0

  constructor(rules: WorkerLaneRules) {
    this.#rules = rules
  }

  #lane(url: string): WorkerLane {
    let lane = this.#lanes.get(url)
    if (lane === undefined) {
      lane = new WorkerLane(this.#rules.breaker)
      this.#lanes.set(url, lane)
    }
    return lane
  }

  /** Each of `urls` as this process sees it now. */
  backlog(urls: readonly string[]): WorkerUrlState[] {
    return urls.map((url) => {
      const lane = this.#lanes.get(url)
      return {
        url,
        inFlight: lane?.inFlight ?? 0,
        slots: this.#rules.slotsPerUrl,
        waiting: lane?.waiters.length ?? 0,
        circuit: lane?.breaker?.state ?? 'closed',
      }
    })
  }

  /**
   * {@link admit}, answered at once (without a promise, so without a turn of the microtask queue)
   * in the common case: a free slot, a closed breaker already read from the other workers, no
   * shared rate to take. Anything else goes through `admit`.
   */
  admitNow(url: string): Admission | Promise<Admission> {
    const lane = this.#lane(url)
    const { shared, rates, slotsPerUrl } = this.#rules
    if (rates !== undefined || lane.inFlight >= slotsPerUrl) return this.admit(url)
    const breaker = lane.breaker
    if (breaker !== undefined && shared !== undefined) {
      const openUntil = shared.known(url)
      if (openUntil === UNREAD) return this.admit(url)
      breaker.follow(openUntil, (state) => this.#rules.circuit(url, state))
    }
    if (breaker !== undefined && breaker.state !== 'closed') return this.admit(url)
    lane.inFlight++
    return { kind: 'attempt', done: this.#start(url, lane, false) }
  }

  /** Whether `url` may be sent to now, waiting at most {@link LANE_WAIT_MS} for a slot of a URL that answers quickly. */
  async admit(url: string): Promise<Admission> {
    const lane = this.#lane(url)
    const now = this.#rules.now()
    const breaker = lane.breaker
    const shared = this.#rules.shared
    // What other workers decided comes first: told to listeners, not written back.
    if (breaker !== undefined && shared !== undefined)
      breaker.follow(await shared.openUntil(url), (state) => this.#rules.circuit(url, state))
    let permit = breaker === undefined ? 'attempt' : breaker.allows(now, (state) => this.#changed(url, state, breaker))
    if (permit === 'probe' && shared !== undefined) {
      const claim = await shared.claimProbe(url)
      if (!claim.claimed) {
        // Another worker probes this cool-down, or its probe failed and opened the breaker again.
        breaker?.releaseProbe()
        if (claim.openUntil !== undefined) breaker?.follow(claim.openUntil, (state) => this.#rules.circuit(url, state))
        permit = undefined
      }
    }
    if (permit === undefined) return this.#heldByBreaker(breaker as CircuitBreaker, now)
    if (lane.inFlight < this.#rules.slotsPerUrl) {
      lane.inFlight++
    } else if (!(await this.#slotWithin(lane, now))) {
      // Stryker disable next-line ConditionalExpression: an 'attempt' comes from a closed breaker, whose probe is not out.
      if (permit === 'probe') breaker?.releaseProbe()
      return { kind: 'wait', until: this.#returnTime(lane, this.#rules.now()), breaker: false }
    } else if (permit === 'attempt' && breaker !== undefined && breaker.state !== 'closed') {
      // The breaker opened while this job waited for its slot: the slot goes on, unused.
      this.#free(lane)
      return this.#heldByBreaker(breaker, this.#rules.now())
    }
    const rates = this.#rules.rates
    const wait = rates === undefined ? 0 : await rates.take(url)
    if (wait > 0) {
      // Over the URL's rate, counted across every worker: the slot goes on, and the job comes
      // back in turn, one interval of the rate after the one before.
      this.#free(lane)
      if (permit === 'probe') breaker?.releaseProbe()
      const at = this.#rules.now()
      const until = Math.max(lane.nextReturn, at + wait)
      lane.nextReturn = until + (rates as SharedRates).interval
      return { kind: 'wait', until: Math.ceil(until), breaker: false }
    }
    return { kind: permit, done: this.#start(url, lane, permit === 'probe') }
  }

  /** Gives a slot up: to the longest-waiting job, or back to the lane. */
  #free(lane: WorkerLane): void {
    if (!this.#handOver(lane)) lane.inFlight--
  }

  /**
   * A job held back by the URL's breaker: open, until its cool-down ends; half-open with the probe
   * out, another cool-down at most, so that a probe that succeeds does not leave the others
   * waiting for a timeout.
   */
  #heldByBreaker(breaker: CircuitBreaker, now: number): Admission {
    const rules = this.#rules.breaker as BreakerRules
    const wait = breaker.state === 'open' ? breaker.openUntil - now : Math.min(rules.coolDownMs, this.#rules.timeoutMs)
    return { kind: 'wait', until: this.#spread(now, wait), breaker: true }
  }

  /**
   * When a job left by a URL whose slots are taken comes back: in turn, one slot's worth of the
   * URL's pace after the one before (the time its attempts take, divided by its slots), so that a
   * backlog comes back as fast as the URL can take it, not all at once to find the slots taken
   * again. Past {@link RETURN_HORIZON_MS} ahead, jobs come back at the horizon, spread over one
   * attempt's time: a URL that recovers is not kept waiting for a schedule made while it was slow.
   */
  #returnTime(lane: WorkerLane, now: number): number {
    const wait = Math.min(Math.max(lane.expectedWait(now), LANE_WAIT_MS), this.#rules.timeoutMs)
    const turn = Math.max(lane.nextReturn, now + wait)
    if (turn - now > RETURN_HORIZON_MS) return now + RETURN_HORIZON_MS + Math.ceil(wait * this.#rules.random())
    lane.nextReturn = turn + wait / this.#rules.slotsPerUrl
    return Math.ceil(turn)
  }

  /** `now + wait`, plus up to as much again: jobs that left together do not all come back together. */
  #spread(now: number, wait: number): number {
    return now + Math.ceil(wait * (1 + this.#rules.random()))
  }

  /** Waits for a slot, unless this URL's attempts take longer than a job should hold its worker slot for. */
  #slotWithin(lane: WorkerLane, now: number): Promise<boolean> {
    if (lane.expectedWait(now) > LANE_WAIT_MS) return Promise.resolve(false)
    return new Promise((resolve) => {
      const waiter: Waiter = { settled: false, resolve }
      lane.waiters.push(waiter)
      // One timer per waiting job, and jobs waiting here are bounded by the worker's concurrency.
      setTimeout(() => {
        // Stryker disable next-line ConditionalExpression: a waiter handed a slot has resolved; resolving again is a no-op.
        if (waiter.settled) return
        waiter.settled = true
        resolve(false)
      }, LANE_WAIT_MS)
    })
  }

  /** Starts an attempt on a slot already counted in `inFlight`, and returns what ends it. */
  #start(url: string, lane: WorkerLane, probe: boolean): (failed: boolean) => void {
    const ticket = ++this.#tickets
    const started = this.#rules.now()
    lane.starts.set(ticket, started)
    return (failed) => {
      const now = this.#rules.now()
      lane.starts.delete(ticket)
      const took = now - started
      lane.took = lane.took === undefined ? took : Math.round(lane.took * 0.8 + took * 0.2)
      const breaker = lane.breaker
      breaker?.record(failed, probe, now, (state) => this.#changed(url, state, breaker))
      this.#free(lane)
    }
  }

  /** A change of this process's own breaker: told, and shared with the other workers. */
  #changed(url: string, state: CircuitState, breaker: CircuitBreaker): void {
    this.#rules.circuit(url, state)
    if (state === 'open') this.#rules.shared?.open(url, breaker.openUntil)
    else if (state === 'closed') this.#rules.shared?.close(url)
  }

  /**
   * A freed slot goes to the longest-waiting job still waiting, still counted in `inFlight` so
   * that nobody takes it in between; `false` when nobody waits.
   */
  #handOver(lane: WorkerLane): boolean {
    for (let waiter = lane.waiters.shift(); waiter !== undefined; waiter = lane.waiters.shift()) {
      if (waiter.settled) continue
      // Stryker disable next-line BooleanLiteral: its timer would only resolve it again, a no-op.
      waiter.settled = true
      waiter.resolve(true)
      return true
    }
    return false
  }
}
