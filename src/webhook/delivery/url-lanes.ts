import type { Clock } from '../../core/clock.js'
import { Queue } from '../../core/queue.js'
import { signBody, type CallbackFailure } from './callbacks.js'
import type { CircuitBreaker, CircuitState } from './circuit-breaker.js'
import { TokenBucket } from './rate-limit.js'
import { UrlPolicy, type Admission, type Permit } from './url-policy.js'
import type { Endpoint } from '../network/endpoint.js'
import { sharedFailure, toWebhookError, type AttemptFailure } from './failure.js'
import type { DeliveryResult } from './result.js'
import { MemoryRetryStore, type Due } from './retry-store.js'
import {
  callbackFailure,
  nextAttempt,
  recordAttempt,
  WINDOW_GRACE_MS,
  type DeliveryState,
  type TargetState,
} from './state.js'
import { RetryScheduler } from './scheduler.js'
import type { Outgoing, Sender } from './sender.js'
import type { ResolvedWebhookSettings } from './settings.js'
import type { WebhookResponse } from '../network/transport.js'
import type { WebhookErrorCode } from './webhook-error.js'
import type { Signer } from '../signing/signer.js'

/**
 * One event at one URL, waiting or in flight: the URL's target state (a few numbers and its last
 * failure) and where the lanes hold it, the event's bytes shared through its {@link Delivery}.
 * `where` says which count of its lane holds it. Its endpoint is its lane's, read through the
 * prototype rather than held by each of a hundred thousand waiting items.
 */
export abstract class LaneItem implements TargetState<Endpoint>, Due {
  status: TargetState['status'] = 'pending'
  attempts = 0
  lastStatus: number | undefined = undefined
  failure: AttemptFailure | undefined = undefined
  retryAfterMs: number | undefined = undefined
  readonly lane: UrlLane
  /** On the lanes' clock: small whole numbers, which V8 keeps in the object rather than boxed. */
  dueAt = 0
  /** `signing`: due, and waiting for its signature to be made again (see {@link UrlLanes}). */
  where: 'ready' | 'waiting' | 'signing' | 'flight' | 'done' = 'done'
  slot: number | undefined = undefined

  constructor(lane: UrlLane) {
    this.lane = lane
  }

  get endpoint(): Endpoint {
    return this.lane.endpoint
  }

  /** The event this item carries to its URL. */
  abstract get delivery(): Delivery
}

/** An event at its second to fifth URL: the first is its {@link Delivery} itself. */
class OtherUrlItem extends LaneItem {
  readonly delivery: Delivery

  constructor(delivery: Delivery, lane: UrlLane) {
    super(lane)
    this.delivery = delivery
  }
}

/**
 * One event on its way through the lanes, and the item of its first URL. Most destinations have
 * one URL: a delivery waiting for it is then this one object, with its body, its id and the
 * promise `deliver()` returned, and no list of items. The event's other URLs have items of their
 * own ({@link others}). Its state is what a result reports; its bytes are shared by its URLs.
 */
export class Delivery extends LaneItem implements DeliveryState<Endpoint>, Outgoing {
  readonly eventId: string
  readonly body: string
  /**
   * The `X-Signature`, when signed. An event with one URL lets it go while it waits for a time,
   * and has it made again when due: a few microseconds, against its bytes held for hours.
   */
  signature: string | undefined
  readonly deadline: number
  /** URLs not settled yet (neither delivered, failed nor superseded). */
  open: number
  /** When `deliver()` took the event, on the lanes' clock: the result's `durationMs` counts from here. */
  readonly startedAt: number
  /** Who waits for the event's outcome (`deliver()`'s promise). */
  readonly resolve: (result: DeliveryResult) => void
  /** The items of the URLs after the first, in the order configured; none with one URL. */
  others: readonly LaneItem[] | undefined = undefined

  constructor(
    lane: UrlLane,
    outgoing: Outgoing,
    deadline: number,
    urls: number,
    startedAt: number,
    resolve: (result: DeliveryResult) => void,
  ) {
    super(lane)
    this.eventId = outgoing.eventId
    this.body = outgoing.body
    this.signature = outgoing.signature
    this.deadline = deadline
    this.open = urls
    this.startedAt = startedAt
    this.resolve = resolve
  }

  get delivery(): Delivery {
    return this
  }

  /** One item per configured URL, in the order configured: each is that URL's target state. */
  get targets(): LaneItem[] {
    return this.others === undefined ? [this] : [this, ...this.others]
  }

  /** The most attempts any URL made: a result's `attempts`. */
  get rounds(): number {
    let most = this.attempts
    for (const other of this.others ?? []) most = Math.max(most, other.attempts)
    return most
  }
}

/**
 * One URL's lane: its queue of deliveries ready to send, and its {@link UrlPolicy} (its slots,
 * breaker and rate), which decides when one may go.
 */
export class UrlLane {
  readonly endpoint: Endpoint
  readonly policy: UrlPolicy
  /** `ratePerUrl` is set: what is queued may wait for it. */
  readonly rated: boolean
  readonly ready = new Queue<LaneItem>()
  /** Live items in `ready` (the queue may still hold items superseded while they waited in it). */
  readyCount = 0
  /** Items of this URL in the scheduler: waiting for a retry, or for the breaker. */
  waitingCount = 0
  /** Set while the lane waits for its rate's next turn. */
  throttled: ReturnType<typeof setTimeout> | undefined
  /** In the dispatcher's rotation. */
  rotating = false
  /** The failure the URL's last failed attempt recorded: the next alike is kept as this one (see sharedFailure). */
  lastFailure: AttemptFailure | undefined = undefined

  constructor(endpoint: Endpoint, policy: UrlPolicy, rated: boolean) {
    this.endpoint = endpoint
    this.policy = policy
    this.rated = rated
  }

  get breaker(): CircuitBreaker | undefined {
    return this.policy.breaker
  }
}

/** How many deliveries wait for one URL, and where its breaker stands. */
export interface UrlBacklog {
  readonly url: string
  /** Deliveries ready to be sent, waiting for one of the URL's slots. */
  readonly queued: number
  /** Deliveries waiting for their retry time, or for the URL's breaker to let them through. */
  readonly retrying: number
  /** Requests to the URL in flight. */
  readonly inFlight: number
  readonly circuit: CircuitState
}

/** What the lanes tell the engine that owns them. */
export interface LaneHooks {
  /** After each request: `target` holds its outcome; the request took `durationMs`. */
  attempted(delivery: Delivery, target: LaneItem, durationMs: number): void
  /** A URL of `delivery` will be tried again at `dueAt` (on the lanes' clock). */
  retrying(delivery: Delivery, target: LaneItem, dueAt: number): void
  /** Every URL of `delivery` has settled, or one accepted it in mode `'any'`. */
  finished(delivery: Delivery): void
  /** A URL's breaker changed state. */
  circuit(url: string, state: CircuitState): void
}

/**
 * The in-memory engine's unit of work: one attempt to one URL. Each URL has its own lane (its
 * queue, `maxConcurrencyPerUrl` slots, its breaker), and each event at each URL its own attempts
 * and retry times, so a URL that is silent, slow or failing holds only its own slots. The URLs
 * share `maxConcurrency` by partition: each gets at most `maxConcurrency ÷ URLs`, so no URL can
 * take the slots another needs. One scheduler (one timer) holds every item waiting for a time.
 */
export class UrlLanes {
  readonly #settings: ResolvedWebhookSettings
  readonly #send: Sender
  /** Makes the `X-Signature` again for a delivery that let it go while it waited. */
  readonly #sign: Signer | undefined
  readonly #clock: Clock
  readonly #hooks: LaneHooks
  readonly #lanes: UrlLane[]
  readonly #byEndpoint = new Map<Endpoint, UrlLane>()
  /** Lanes with items ready and a slot free, in turn. */
  readonly #rotation = new Queue<UrlLane>()
  readonly #scheduler: RetryScheduler<LaneItem>
  /** Requests in flight over every URL: at most `maxConcurrency`, however many URLs share it. */
  #inFlight = 0
  /** Items due whose signature is being made again (Web Crypto): still waiting for their retry. */
  #signing = 0
  #closing = false
  /** close()'s deadline has passed: nothing is sent any more. */
  #abandoned = false

  constructor(
    settings: ResolvedWebhookSettings,
    endpoints: readonly Endpoint[],
    send: Sender,
    sign: Signer | undefined,
    clock: Clock,
    hooks: LaneHooks,
  ) {
    this.#settings = settings
    this.#send = send
    this.#sign = sign
    this.#clock = clock
    this.#hooks = hooks
    const slots = Math.max(
      1,
      Math.min(settings.maxConcurrencyPerUrl, Math.floor(settings.maxConcurrency / endpoints.length)),
    )
    const circuit = (url: string, state: CircuitState) => this.#hooks.circuit(url, state)
    this.#lanes = endpoints.map((endpoint) => {
      const rate = settings.ratePerUrl === undefined ? undefined : new TokenBucket(settings.ratePerUrl, clock())
      const policy = new UrlPolicy(endpoint.url, {
        slots,
        breaker: settings.breaker,
        timeoutMs: settings.timeoutMs,
        rate,
        now: clock,
        circuit,
      })
      const lane = new UrlLane(endpoint, policy, rate !== undefined)
      this.#byEndpoint.set(endpoint, lane)
      return lane
    })
    this.#scheduler = new RetryScheduler<LaneItem>(new MemoryRetryStore(), (item) => this.#due(item), clock)
  }

  /** Deliveries waiting for a time (a retry, or a breaker's cool-down), over all URLs. */
  get waiting(): number {
    return this.#scheduler.size + this.#signing
  }

  #held(lane: UrlLane): number {
    return lane.readyCount + lane.waitingCount + lane.policy.inFlight
  }

  /** Each URL's backlog, in the order configured. */
  backlog(): UrlBacklog[] {
    return this.#lanes.map((lane) => ({
      url: lane.endpoint.url,
      queued: lane.readyCount,
      retrying: lane.waitingCount,
      inFlight: lane.policy.inFlight,
      circuit: lane.policy.circuit,
    }))
  }

  /**
   * Takes an event to every configured URL, its retry window starting now; `resolve` gets its
   * result. A lane at `maxPendingPerUrl` takes none: that URL fails at once with
   * `ERR_BACKLOG_FULL`, and the event goes on at the others.
   */
  add(outgoing: Outgoing, startedAt: number, resolve: (result: DeliveryResult) => void): void {
    const lanes = this.#lanes
    // Every URL counts before any settles: a URL refused here must not end the event early.
    const delivery = new Delivery(
      lanes[0] as UrlLane,
      outgoing,
      this.#clock() + this.#settings.retryWindowMs,
      lanes.length,
      startedAt,
      resolve,
    )
    if (lanes.length > 1) delivery.others = lanes.slice(1).map((lane) => new OtherUrlItem(delivery, lane))
    // Nothing here can end the event before its last URL is placed: each URL settles once, and
    // the event ends once every URL has (or at a 2xx, which no attempt has had yet).
    for (const item of delivery.targets) {
      if (this.#held(item.lane) >= this.#settings.maxPendingPerUrl) {
        this.#settle(item, 'failed', { code: 'ERR_BACKLOG_FULL' })
        continue
      }
      this.#enter(item)
    }
    // An event signed after close() began (Web Crypto signs in a promise) is sent as what was
    // queued then is; after close()'s deadline, nothing is.
    if (this.#abandoned) this.abandon()
    else if (this.#closing) this.#endUnsendable()
    this.#dispatch()
  }

  /**
   * Stops: no retry is scheduled any more, and every URL waiting for a time ends now with
   * `ERR_CLOSED` (the memory that holds it is going away), its last failure as the `cause`. Items
   * ready to send are still sent.
   */
  close(): void {
    this.#closing = true
    // What the scheduler holds is waiting and pending, its event open (see #due).
    for (const item of this.#scheduler.stop()) {
      item.lane.waitingCount--
      item.where = 'done'
      this.#settle(item, 'failed', closedFailure(item))
    }
    this.#endUnsendable()
  }

  /**
   * What is queued behind a breaker that is not closed, or a rate, could not be sent for a while:
   * once closing, it ends now, and no probe or timer outlives close().
   */
  #endUnsendable(): void {
    for (const lane of this.#lanes) {
      clearTimeout(lane.throttled)
      lane.throttled = undefined
      if (lane.policy.circuit === 'closed' && !lane.rated) continue
      for (let item = this.#takeReady(lane); item !== undefined; item = this.#takeReady(lane)) {
        this.#settle(item, 'failed', closedFailure(item))
      }
    }
  }

  /**
   * At close()'s deadline: what is still queued for a slot is not sent and ends now with
   * `ERR_CLOSED`, so nothing leaves after close() has resolved. Requests in flight end on their
   * own, within `timeoutMs`. Nothing waits to enter a queue afterwards: new events are refused,
   * the scheduler has stopped, and an event whose signature comes later ends as it arrives (see add).
   */
  abandon(): void {
    this.#abandoned = true
    for (const lane of this.#lanes) {
      for (let item = this.#takeReady(lane); item !== undefined; item = this.#takeReady(lane)) {
        this.#settle(item, 'failed', closedFailure(item))
      }
    }
  }

  /** An item goes to its lane's queue, or waits in the scheduler while its breaker is open. */
  #enter(item: LaneItem): void {
    const breaker = item.lane.breaker
    if (breaker !== undefined && breaker.state === 'open') {
      const now = this.#clock()
      // Stryker disable next-line EqualityOperator: at openUntil exactly, waiting is due at once, and the next ms enters.
      if (now < breaker.openUntil) {
        this.#waitForBreaker(item, breaker)
        return
      }
    }
    item.where = 'ready'
    item.lane.readyCount++
    item.lane.ready.push(item)
    this.#rotate(item.lane)
  }

  /** Waits until the open breaker lets a probe through, or the item's window ends, whichever comes first. */
  #waitForBreaker(item: LaneItem, breaker: CircuitBreaker): void {
    this.#wait(item, Math.min(breaker.openUntil, item.delivery.deadline))
  }

  #wait(item: LaneItem, dueAt: number): void {
    if (this.#closing) {
      // The scheduler has stopped: what would wait for a time ends now.
      item.where = 'done'
      this.#settle(item, 'failed', closedFailure(item))
      return
    }
    item.where = 'waiting'
    item.dueAt = dueAt
    item.lane.waitingCount++
    this.#scheduler.schedule(item)
    // Alone at its only URL, nothing else of the event needs the signature until it is due again.
    const { delivery } = item
    if (delivery.others === undefined) delivery.signature = undefined
  }

  /**
   * An item whose time has come: to its lane, or ended when its window closed behind an open
   * breaker. It is still waiting, pending, its event open: an item leaves the scheduler only here,
   * in close(), or cancelled by #forget when another URL accepts (nothing else settles a waiting URL).
   */
  #due(item: LaneItem): void {
    item.lane.waitingCount--
    item.where = 'done'
    const breaker = item.lane.breaker
    const now = this.#clock()
    // Stryker disable next-line EqualityOperator: at openUntil exactly, waiting is due at once, and the next ms enters.
    if (breaker !== undefined && breaker.state === 'open' && now < breaker.openUntil) {
      // Stryker disable next-line EqualityOperator: at the deadline exactly, waiting until it is due at once, and the next ms ends it.
      if (now >= item.delivery.deadline) {
        // A delivery never sent while the breaker was open has no failure of its own: the URL's is why.
        this.#settle(item, 'failed', endedBy('ERR_CIRCUIT_OPEN', item.failure ?? item.lane.lastFailure, item.endpoint))
        return
      }
      this.#waitForBreaker(item, breaker)
      return
    }
    this.#return(item)
  }

  /** A due item back to its lane, its event signed again first if it let the signature go (#wait). */
  #return(item: LaneItem): void {
    const { delivery } = item
    if (delivery.signature !== undefined || this.#sign === undefined) {
      this.#enter(item)
      this.#dispatch()
      return
    }
    const signing = signBody(this.#sign, delivery.body, this.#settings.timeoutMs)
    if (!(signing instanceof Promise)) {
      this.#signed(item, signing)
      return
    }
    // Web Crypto answers in a promise, within timeoutMs: the item waits for it, counted as waiting.
    // Only an event with one URL lets its signature go, so nothing else can settle it meanwhile.
    item.where = 'signing'
    item.lane.waitingCount++
    this.#signing++
    void signing.then((signature) => {
      item.lane.waitingCount--
      this.#signing--
      item.where = 'done'
      this.#signed(item, signature)
    })
  }

  /** Queues a due item with its new signature; without one it is not sent, and its URL fails as at the first attempt. */
  #signed(item: LaneItem, signature: string | CallbackFailure): void {
    if (typeof signature !== 'string') {
      this.#settle(item, 'failed', callbackFailure('signer', signature.cause, item.failure))
      return
    }
    if (this.#closing) {
      // Signed after close() began: a URL waiting for its retry ends, as close() ended the others.
      this.#settle(item, 'failed', closedFailure(item))
      return
    }
    item.delivery.signature = signature
    this.#enter(item)
    this.#dispatch()
  }

  #rotate(lane: UrlLane): void {
    // Stryker disable next-line ConditionalExpression: an empty lane in the rotation is skipped there (#peekReady).
    if (lane.rotating || lane.throttled || lane.readyCount === 0 || !lane.policy.hasSlot) return
    // Stryker disable next-line BooleanLiteral: a lane twice in the rotation is skipped there once empty, and its policy holds it to its slots.
    lane.rotating = true
    this.#rotation.push(lane)
  }

  /**
   * Starts one attempt per lane in turn while lanes have items ready and a slot free, and
   * `maxConcurrency` allows (with more URLs than it has slots, each URL still has one slot, and
   * the lanes take turns for them).
   */
  #dispatch(): void {
    while (this.#inFlight < this.#settings.maxConcurrency) {
      const lane = this.#rotation.shift()
      if (lane === undefined) return
      lane.rotating = false
      if (this.#peekReady(lane) === undefined) continue
      // Synchronous here: no breaker is shared, and a token bucket answers at once.
      const admission = lane.policy.admit() as Admission
      if (admission.kind === 'wait') {
        this.#hold(lane, admission)
        continue
      }
      const item = this.#takeReady(lane) as LaneItem
      // Stryker disable next-line EqualityOperator: at the grace's end exactly either way is on time, within a ms.
      if (this.#clock() > item.delivery.deadline + WINDOW_GRACE_MS) {
        // Waited for a slot of its URL past its window: not sent (its permit goes back).
        lane.policy.unused(admission.kind)
        this.#settle(item, 'failed', item.failure ?? { code: 'ERR_BACKLOG_FULL' })
        this.#rotate(lane)
        continue
      }
      this.#attempt(item, admission.kind)
      this.#rotate(lane)
    }
  }

  /**
   * A lane its policy holds back: over its rate, its queue waits for the next turn, with one timer
   * for the lane; behind an open breaker, what is ready waits in the scheduler; while a probe is
   * out, it stays queued for the probe's answer. (A lane with no slot free is not in the rotation.)
   */
  #hold(lane: UrlLane, admission: Admission & { kind: 'wait' }): void {
    if (admission.held === 'rate') {
      lane.throttled = setTimeout(() => {
        lane.throttled = undefined
        this.#rotate(lane)
        this.#dispatch()
      }, admission.waitMs)
    } else this.#parkReady(lane)
  }

  /**
   * The lane's next live item, left in place. An item still marked `ready` is pending and its event
   * open: what settles a queued URL takes it out (#takeReady), and #forget marks a superseded one
   * `done` and uncounts it, so it is only dropped here.
   */
  #peekReady(lane: UrlLane): LaneItem | undefined {
    for (let item = lane.ready.peek(); item !== undefined; item = lane.ready.peek()) {
      if (item.where === 'ready') return item
      lane.ready.shift()
    }
    return undefined
  }

  /** Takes the lane's next live item out of its queue. */
  #takeReady(lane: UrlLane): LaneItem | undefined {
    const item = this.#peekReady(lane)
    if (item === undefined) return undefined
    lane.ready.shift()
    lane.readyCount--
    item.where = 'done'
    return item
  }

  /**
   * While the breaker is open, a lane's ready items wait in the scheduler until it may probe (or
   * their window ends); while a probe is out, they stay queued until it answers.
   */
  #parkReady(lane: UrlLane): void {
    const breaker = lane.breaker as CircuitBreaker
    if (breaker.state !== 'open') return
    for (let item = this.#takeReady(lane); item !== undefined; item = this.#takeReady(lane)) {
      this.#waitForBreaker(item, breaker)
    }
  }

  /** Sends `item` on the slot its policy gave it with `permit`. */
  #attempt(item: LaneItem, permit: Permit): void {
    const { lane, delivery } = item
    item.where = 'flight'
    this.#inFlight++
    // Counted as sent: a request still in flight when another URL accepts the event is reported.
    item.attempts++
    // performance.now(): a request's time, below the millisecond on loopback.
    const sentAt = performance.now()
    // The sender never rejects: every failure, a transport's throw or rejection included, is an answer.
    void this.#send(lane.endpoint, delivery).then((response) =>
      this.#answered(item, permit, response, performance.now() - sentAt),
    )
  }

  #answered(item: LaneItem, permit: Permit, response: WebhookResponse, durationMs: number): void {
    const { lane, delivery } = item
    this.#inFlight--
    item.where = 'done'
    lane.policy.answered(permit, response)
    if (lane.policy.circuit === 'open') this.#parkReady(lane)
    // An item in flight is pending exactly while its event is open: only a 2xx elsewhere in mode
    // 'any' changes that, superseding the item (its answer is then not reported) and ending the event.
    if (item.status === 'pending') {
      // Date.now(): a Retry-After date is a wall-clock date; what comes out is a duration.
      recordAttempt(item, response, Date.now())
      if (item.failure !== undefined) item.failure = lane.lastFailure = sharedFailure(item.failure, lane.lastFailure)
      this.#hooks.attempted(delivery, item, durationMs)
      if (item.status === 'pending') this.#retry(item)
      else this.#settled(delivery, item)
    }
    this.#rotate(lane)
    this.#dispatch()
  }

  /** Schedules the URL's next attempt, or ends it: window spent, closing, or a `backoff` that gave no delay. */
  #retry(item: LaneItem): void {
    const { delivery } = item
    const now = this.#clock()
    if (this.#closing) {
      this.#settle(item, 'failed', closedFailure(item))
      return
    }
    const dueAt = nextAttempt(item, this.#settings.backoff, now, delivery.deadline)
    if (dueAt === undefined) {
      // Window spent, or no delay from backoff: failed, as the worker's rounds fail it.
      this.#settled(delivery, item)
      return
    }
    this.#hooks.retrying(delivery, item, dueAt)
    // A retry listener may have closed the destination: #wait schedules nothing then.
    this.#wait(item, dueAt)
  }

  /** Ends one URL of an event with `status` (and `failure`, when it failed). */
  #settle(item: LaneItem, status: 'failed', failure: AttemptFailure | undefined): void {
    item.status = status
    // Stryker disable next-line ConditionalExpression: callers pass a failure, or the item's own (#retry).
    if (failure !== undefined) item.failure = failure
    this.#settled(item.delivery, item)
  }

  /** Counts a URL of `delivery` settled; ends the event when its mode says so. */
  #settled(delivery: Delivery, target: LaneItem): void {
    delivery.open--
    const accepted = target.status === 'delivered' && this.#settings.mode === 'any'
    if (accepted) {
      // The first URL to accept ends the event: the others are superseded, waiting or in flight
      // (an attempt in flight finishes in its own lane and is not reported).
      for (const other of delivery.targets) {
        if (other.status !== 'pending') continue
        other.status = 'superseded'
        this.#forget(other)
      }
      delivery.open = 0
    }
    // Once per event, with no flag to say so: each URL settles once, while pending, and none is
    // pending after the last (or after a 2xx in mode 'any').
    if (delivery.open === 0) this.#hooks.finished(delivery)
  }

  /**
   * Takes a superseded item out of its lane at once: out of the scheduler (its memory goes now,
   * not when it would have fallen due), out of the counts; a ready queue drops it when it reaches it.
   */
  #forget(item: LaneItem): void {
    if (item.where === 'ready') item.lane.readyCount--
    else if (item.where === 'waiting') {
      item.lane.waitingCount--
      this.#scheduler.cancel(item)
    }
    // An item in flight is counted by its lane until its answer; nothing reads its `where`.
    item.where = 'done'
  }
}

/** A URL ended by `code` rather than by an answer: the last failure, if any, is the cause. */
function endedBy(code: WebhookErrorCode, last: AttemptFailure | undefined, endpoint: Endpoint): AttemptFailure {
  return last === undefined ? { code } : { code, cause: toWebhookError(last, endpoint) }
}

/** A URL that will not be retried because the destination is closing: its last failure is the cause. */
function closedFailure(item: LaneItem): AttemptFailure {
  return endedBy('ERR_CLOSED', item.failure, item.endpoint)
}
