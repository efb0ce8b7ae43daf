import { SweptMap } from '../../core/swept-map.js'
import { Queue } from '../../core/queue.js'
import type { BreakerRules, CircuitState } from '../delivery/circuit-breaker.js'
import type { Admission } from '../delivery/url-round.js'
import { UrlPolicy, type Admission as PolicyAdmission, type Permit } from '../delivery/url-policy.js'
import type { SharedBreakers } from './shared-breakers.js'
import type { SharedRates } from './shared-rates.js'
import { toWebhookError } from '../delivery/failure.js'

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

/**
 * One URL's share of this worker process: its {@link UrlPolicy} (slots, breaker, rate), how long
 * its attempts take, and the jobs waiting a moment for one of its slots.
 */
class WorkerLane {
  readonly policy: UrlPolicy
  /** When each attempt in flight started, in the order they started: the first is the oldest. */
  readonly starts = new Map<number, number>()
  /** How long this URL's attempts have taken lately (ms), once one has ended. */
  took: number | undefined
  readonly waiters = new Queue<Waiter>()
  /** The earliest a job left because the slots were taken may come back: see `#returnTime`. */
  nextReturn = 0
  /** Admissions under way that wait for Redis (a first reading, a probe's claim, the shared rate). */
  admitting = 0

  constructor(url: string, rules: WorkerLaneRules) {
    this.policy = new UrlPolicy(url, {
      slots: rules.slotsPerUrl,
      breaker: rules.breaker,
      timeoutMs: rules.timeoutMs,
      shared: rules.shared,
      rate: rules.rates,
      now: rules.now,
      circuit: rules.circuit,
      handOver: () => this.#handOver(),
    })
  }

  /** How long a slot of this URL is likely to stay taken: the longer of its recent attempts and its oldest one in flight. */
  expectedWait(now: number): number {
    const oldest = this.starts.values().next()
    return Math.max(this.took ?? 0, oldest.done ? 0 : now - oldest.value)
  }

  /**
   * A freed slot goes to the longest-waiting job still waiting, still counted in `inFlight` so
   * that nobody takes it in between; `false` when nobody waits.
   */
  #handOver(): boolean {
    for (let waiter = this.waiters.shift(); waiter !== undefined; waiter = this.waiters.shift()) {
      if (waiter.settled) continue
      // Stryker disable next-line BooleanLiteral: its timer would only resolve it again, a no-op.
      waiter.settled = true
      waiter.resolve(true)
      return true
    }
    return false
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
  readonly shared?: Pick<SharedBreakers, 'known' | 'read' | 'claimProbe' | 'open' | 'close' | 'openedBy'> | undefined
  /** `ratePerUrl` for every worker of the queue together, if set. */
  readonly rates?: Pick<SharedRates, 'take' | 'interval'> | undefined
  /** In [0, 1): spreads the return of jobs that left the same URL at the same moment. */
  readonly random: () => number
}

/**
 * The per-URL lanes of one worker process: each URL's {@link UrlPolicy} decides whether a job's
 * attempt may go; the lanes decide what a job does when it may not. When a URL's slots are all
 * taken by attempts that take long (a receiver that is silent or slow), the job does not wait for
 * them: it leaves that URL for later (the job goes back to Redis as delayed) and frees its worker
 * slot for other URLs' deliveries. So a bad URL holds at most its own slots of the worker, never
 * the others'.
 */
export class WorkerLanes {
  readonly #rules: WorkerLaneRules
  /**
   * A lane that holds nothing goes once many have come (a fleet that meets 50,000 URLs once each
   * keeps the few with work): nothing in flight or being admitted, its breaker closed, and no
   * job's return still paced by it. What it forgets is how long the URL's attempts took.
   */
  readonly #lanes = new SweptMap<string, WorkerLane>(
    (lane) =>
      lane.admitting === 0 &&
      // No attempt in flight: nobody waits for a slot either (a job waits only while all are taken).
      lane.policy.inFlight === 0 &&
      lane.policy.circuit === 'closed' &&
      lane.nextReturn <= this.#rules.now(),
  )
  #tickets = 0

  constructor(rules: WorkerLaneRules) {
    this.#rules = rules
  }

  #lane(url: string): WorkerLane {
    let lane = this.#lanes.get(url)
    if (lane === undefined) {
      this.#lanes.sweepIfGrown()
      lane = new WorkerLane(url, this.#rules)
      this.#lanes.set(url, lane)
    }
    return lane
  }

  /** URLs this process holds state for: those with work, and idle ones not swept yet. */
  get size(): number {
    return this.#lanes.size
  }

  /** Each of `urls` as this process sees it now. */
  backlog(urls: readonly string[]): WorkerUrlState[] {
    return urls.map((url) => {
      const lane = this.#lanes.get(url)
      return {
        url,
        inFlight: lane?.policy.inFlight ?? 0,
        slots: this.#rules.slotsPerUrl,
        waiting: lane?.waiters.length ?? 0,
        circuit: lane?.policy.circuit ?? 'closed',
      }
    })
  }

  /**
   * Whether `url` may be sent to now, waiting at most {@link LANE_WAIT_MS} for a slot of a URL that
   * answers quickly. Answered at once (without a promise, so without a turn of the microtask
   * queue) in the common case: a free slot, a closed breaker already read from the other
   * workers, no shared rate to ask.
   */
  admitNow(url: string): Admission | Promise<Admission> {
    const lane = this.#lane(url)
    const admitted = lane.policy.admit(() => this.#slotWithin(lane))
    if (!(admitted instanceof Promise)) return this.#round(lane, admitted)
    // Counted while Redis answers: the lane holds nothing else yet, and must not be swept meanwhile.
    lane.admitting++
    return admitted.then(
      (admission) => {
        lane.admitting--
        return this.#round(lane, admission)
      },
      (error: unknown) => {
        lane.admitting--
        throw error
      },
    )
  }

  /** {@link admitNow}, always as a promise. */
  async admit(url: string): Promise<Admission> {
    return this.admitNow(url)
  }

  /** The policy's answer as a round takes it: a permit with what ends it, or when the job comes back. */
  #round(lane: WorkerLane, admission: PolicyAdmission): Admission {
    if (admission.kind !== 'wait') return this.#start(lane, admission.kind)
    const now = this.#rules.now()
    switch (admission.held) {
      case 'breaker':
        // Never back sooner than a slot is waited for: with a cool-down of 0, a job held while
        // the probe is out would otherwise go round through Redis as fast as it can.
        return {
          kind: 'wait',
          until: this.#spread(now, Math.max(admission.until - now, LANE_WAIT_MS)),
          breaker: true,
          openedBy: admission.openedBy && {
            status: admission.openedBy.status,
            // The error a dead letter names beside ERR_CIRCUIT_OPEN: `https://… answered HTTP 503.`
            cause: toWebhookError(admission.openedBy, { url: lane.policy.url, timeoutMs: this.#rules.timeoutMs }),
          },
        }
      case 'slots':
        return { kind: 'wait', until: this.#returnTime(lane, now), breaker: false }
      case 'rate': {
        // Over the URL's rate, counted across every worker: the job comes back in turn, one
        // interval of the rate after the one before.
        const until = Math.max(lane.nextReturn, now + admission.waitMs)
        lane.nextReturn = until + (this.#rules.rates as SharedRates).interval
        return { kind: 'wait', until: Math.ceil(until), breaker: false }
      }
    }
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
  #slotWithin(lane: WorkerLane): Promise<boolean> {
    if (lane.expectedWait(this.#rules.now()) > LANE_WAIT_MS) return Promise.resolve(false)
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

  /** Starts an attempt on the slot its policy gave with `permit`, and returns what ends it. */
  #start(lane: WorkerLane, permit: Permit): Admission {
    // Stryker disable next-line UpdateOperator: counting down makes tickets as unique.
    const ticket = ++this.#tickets
    const started = this.#rules.now()
    lane.starts.set(ticket, started)
    return {
      kind: permit,
      answered: (response, heard) => {
        const now = this.#rules.now()
        lane.starts.delete(ticket)
        const took = now - started
        lane.took = lane.took === undefined ? took : Math.round(lane.took * 0.8 + took * 0.2)
        lane.policy.answered(permit, response, heard)
      },
      unused: () => {
        lane.starts.delete(ticket)
        lane.policy.unused(permit)
      },
    }
  }
}
