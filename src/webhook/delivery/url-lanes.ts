import { SweptMap } from '../../core/swept-map.js'
import type { Clock } from '../../core/clock.js'
import { Queue } from '../../core/queue.js'
import { signBody, type CallbackFailure } from './callbacks.js'
import type { CircuitBreaker, CircuitState } from './circuit-breaker.js'
import { TokenBucket } from './rate-limit.js'
import { UrlPolicy, type Admission, type Permit } from './url-policy.js'
import type { Endpoint } from '../network/endpoint.js'
import { sharedFailure, toWebhookError, type AttemptFailure } from './failure.js'
import type { Route } from './route.js'
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
import type { Outgoing } from './sender.js'
import { MAX_WEBHOOKS, type ResolvedWebhookSettings } from './settings.js'
import type { WebhookResponse } from '../network/transport.js'
import type { WebhookErrorCode } from './webhook-error.js'

/**
 * One event at one URL, waiting or in flight: the URL's target state (a few numbers and its last
 * failure) and where the lanes hold it, the event's bytes shared through its {@link Delivery}.
 * `where` says which count of its lane holds it. Its endpoint is its destination's (the URL's
 * headers there), shared by every event of the destination.
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
  /** Replaced when the event follows a change of its destination (new headers for the URL). */
  endpoint: Endpoint

  constructor(lane: UrlLane, endpoint: Endpoint) {
    this.lane = lane
    this.endpoint = endpoint
  }

  /** The event this item carries to its URL. */
  abstract get delivery(): Delivery
}

/** An event at its second to fifth URL: the first is its {@link Delivery} itself. */
class OtherUrlItem extends LaneItem {
  readonly delivery: Delivery

  constructor(delivery: Delivery, lane: UrlLane, endpoint: Endpoint) {
    super(lane, endpoint)
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
  /**
   * The items of the URLs after the first, in the order configured, and then of any URL its
   * destination gained while it waited; none with one URL.
   */
  others: readonly LaneItem[] | undefined = undefined
  /** Its destination's version it was last sent by: see {@link Route}. */
  route: Route

  constructor(
    lane: UrlLane,
    route: Route,
    outgoing: Outgoing,
    deadline: number,
    startedAt: number,
    resolve: (result: DeliveryResult) => void,
  ) {
    super(lane, route.endpoints[0] as Endpoint)
    this.route = route
    this.eventId = outgoing.eventId
    this.body = outgoing.body
    this.signature = outgoing.signature
    this.deadline = deadline
    this.open = route.endpoints.length
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
  readonly url: string
  readonly policy: UrlPolicy
  /** One of the engine's own `webhooks`: kept while idle, and listed first by `backlog()`. */
  readonly own: boolean
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

  constructor(url: string, policy: UrlPolicy, rated: boolean, own: boolean) {
    this.url = url
    this.policy = policy
    this.rated = rated
    this.own = own
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
 * queue, its slots, its breaker), whichever destinations list it, and each event at each URL its
 * own attempts and retry times, so a URL that is silent, slow or failing holds only its own slots.
 * The URLs share `maxConcurrency` by partition: each of the engine's own URLs gets at most
 * `maxConcurrency ÷ URLs`, each URL of the registry's destinations a fifth of it (a destination has
 * at most five), so no URL can take the slots another needs. Lanes take turns for free slots, so a
 * destination's backlog at its URLs holds up no other destination's URLs. One scheduler (one
 * timer) holds every item waiting for a time.
 *
 * A lane of the registry's exists while it has work or its breaker is not closed: idle ones are
 * swept as new ones come, so memory follows the URLs that have work, not every URL ever seen.
 */
export class UrlLanes {
  readonly #settings: ResolvedWebhookSettings
  readonly #clock: Clock
  readonly #hooks: LaneHooks
  /**
   * Every lane held, by URL: the engine's own first, in the order configured. A registry's lane
   * that holds nothing goes once many have come: no item, and a closed breaker (an open one must
   * stay open for the next event; a rate's bucket is full again after a quiet while anyway). A
   * lane holding nothing has no rate timer left that matters, and is out of the rotation or
   * skipped there once empty (#peekReady): held items and the breaker are all that count.
   */
  readonly #lanes = new SweptMap<string, UrlLane>(
    (lane) => !lane.own && this.#held(lane) === 0 && lane.policy.circuit === 'closed',
  )
  /** Slots of a URL of the registry's destinations. */
  readonly #registrySlots: number
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

  /** @param own - The engine's own URLs (none for an engine that serves only the registry's destinations). */
  constructor(settings: ResolvedWebhookSettings, own: readonly Endpoint[], clock: Clock, hooks: LaneHooks) {
    this.#settings = settings
    this.#clock = clock
    this.#hooks = hooks
    const share = (urls: number) =>
      Math.max(1, Math.min(settings.maxConcurrencyPerUrl, Math.floor(settings.maxConcurrency / urls)))
    this.#registrySlots = share(MAX_WEBHOOKS)
    const slots = share(own.length)
    for (const endpoint of own) this.#lanes.set(endpoint.url, this.#newLane(endpoint.url, slots, true))
    this.#scheduler = new RetryScheduler<LaneItem>(new MemoryRetryStore(), (item) => this.#due(item), clock)
  }

  #newLane(url: string, slots: number, own: boolean): UrlLane {
    const settings = this.#settings
    const clock = this.#clock
    const rate = settings.ratePerUrl === undefined ? undefined : new TokenBucket(settings.ratePerUrl, clock())
    const policy = new UrlPolicy(url, {
      slots,
      breaker: settings.breaker,
      timeoutMs: settings.timeoutMs,
      rate,
      now: clock,
      circuit: (changed, state) => this.#hooks.circuit(changed, state),
    })
    return new UrlLane(url, policy, rate !== undefined, own)
  }

  /** The lane of `url`, made when it has none: a URL of the registry's, or one of the engine's own. */
  #laneFor(url: string): UrlLane {
    let lane = this.#lanes.get(url)
    if (lane === undefined) {
      lane = this.#newLane(url, this.#registrySlots, false)
      this.#lanes.set(url, lane)
    }
    return lane
  }

  /** Deliveries waiting for a time (a retry, or a breaker's cool-down), over all URLs. */
  get waiting(): number {
    return this.#scheduler.size + this.#signing
  }

  #held(lane: UrlLane): number {
    return lane.readyCount + lane.waitingCount + lane.policy.inFlight
  }

  /** Each URL's backlog: the engine's own, in the order configured, then the registry's URLs it holds. */
  backlog(): UrlBacklog[] {
    return Array.from(this.#lanes.values(), (lane) => ({
      url: lane.url,
      queued: lane.readyCount,
      retrying: lane.waitingCount,
      inFlight: lane.policy.inFlight,
      circuit: lane.policy.circuit,
    }))
  }

  /**
   * Takes an event to every URL of its destination's `route`, its retry window starting now;
   * `resolve` gets its result. A lane at `maxPendingPerUrl` takes none: that URL fails at once
   * with `ERR_BACKLOG_FULL`, and the event goes on at the others.
   */
  add(outgoing: Outgoing, route: Route, startedAt: number, resolve: (result: DeliveryResult) => void): void {
    // Before the event takes its lanes, never while an item points at a lane it has not entered yet.
    this.#lanes.sweepIfGrown()
    const { endpoints } = route
    const first = endpoints[0] as Endpoint
    // Every URL counts before any settles: a URL refused here must not end the event early.
    const delivery = new Delivery(
      this.#laneFor(first.url),
      route,
      outgoing,
      this.#clock() + this.#settings.retryWindowMs,
      startedAt,
      resolve,
    )
    if (endpoints.length > 1)
      delivery.others = endpoints
        .slice(1)
        .map((endpoint) => new OtherUrlItem(delivery, this.#laneFor(endpoint.url), endpoint))
    // Nothing here can end the event before its last URL is placed: each URL settles once, and
    // the event ends once every URL has (or at a 2xx, which no attempt has had yet).
    for (const item of delivery.targets) this.#place(item)
    // An event signed after close() began (Web Crypto signs in a promise) is sent as what was
    // queued then is; after close()'s deadline, nothing is.
    if (this.#abandoned) this.abandon()
    else if (this.#closing) this.#endUnsendable()
    this.#dispatch()
  }

  /** A URL's first entry: queued, or failed at once when its lane holds `maxPendingPerUrl` already. */
  #place(item: LaneItem): void {
    if (this.#held(item.lane) >= this.#settings.maxPendingPerUrl)
      this.#settle(item, 'failed', { code: 'ERR_BACKLOG_FULL' })
    else this.#enter(item)
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
    for (const lane of this.#lanes.values()) {
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
    for (const lane of this.#lanes.values()) {
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
   * in close(), by #forget when another URL accepts, or when its destination changes under it.
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
    this.#requeue(item)
    this.#dispatch()
  }

  /**
   * An item out of every queue and still to be sent: brought up to its destination's latest
   * version, signed again if its event let its signature go (#wait) or its secrets changed, then
   * queued. The caller dispatches.
   */
  #requeue(item: LaneItem): void {
    const { delivery } = item
    // Stryker disable next-line ConditionalExpression: following a route that has not changed changes nothing.
    if (delivery.route.next !== undefined && !this.#follow(delivery, item)) return
    const sign = delivery.route.sign
    if (delivery.signature !== undefined || sign === undefined) {
      this.#enter(item)
      return
    }
    const signing = signBody(sign, delivery.body, this.#settings.timeoutMs)
    if (!(signing instanceof Promise)) {
      this.#signed(item, signing)
      return
    }
    // Web Crypto answers in a promise, within timeoutMs: the item waits for it, counted as waiting.
    item.where = 'signing'
    item.lane.waitingCount++
    this.#signing++
    void signing.then((signature) => {
      item.lane.waitingCount--
      this.#signing--
      item.where = 'done'
      // Another URL may have ended the event meanwhile (a 2xx in mode 'any', its destination gone).
      if (item.status !== 'pending') return
      this.#signed(item, signature)
      this.#dispatch()
    })
  }

  /** Queues an item with its new signature; without one it is not sent, and its URL fails as at the first attempt. */
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
  }

  /**
   * Brings an event up to its destination's latest version as one of its items is about to be
   * sent (`item`, out of every queue). A disabled or deleted destination ends every URL still
   * pending (`ERR_DESTINATION_DISABLED`, `ERR_UNKNOWN_DESTINATION`). Otherwise state follows the
   * URL: a URL still listed goes on where it was, with its new headers; a URL added starts now,
   * within the event's window; a URL removed is not sent to again (`'superseded'`). New secrets
   * sign it again before its next request. Returns whether `item` is still to be sent.
   */
  #follow(delivery: Delivery, item: LaneItem): boolean {
    let route = delivery.route
    while (route.next !== undefined) route = route.next
    delivery.route = route
    const targets = delivery.targets
    if (route.ended !== undefined) {
      for (const target of targets) {
        if (target.status !== 'pending') continue
        this.#forget(target)
        this.#settle(target, 'failed', { code: route.ended })
      }
      return false
    }
    // Each version signs with its own secrets: made again before the next request.
    delivery.signature = undefined
    const listed = new Map(route.endpoints.map((endpoint) => [endpoint.url, endpoint]))
    const added: LaneItem[] = []
    const known = new Set(targets.map((target) => target.lane.url))
    for (const endpoint of route.endpoints) {
      if (!known.has(endpoint.url)) added.push(new OtherUrlItem(delivery, this.#laneFor(endpoint.url), endpoint))
    }
    // The URLs added count before any removed one settles: the event must not end in between.
    // Stryker disable next-line ConditionalExpression,EqualityOperator: with none added, the same items in a new list (an event of one URL then keeps its signature while it waits: memory, not behaviour).
    if (added.length > 0) {
      delivery.others = [...(delivery.others ?? []), ...added]
      delivery.open += added.length
    }
    for (const target of targets) {
      const endpoint = listed.get(target.lane.url)
      if (endpoint !== undefined) target.endpoint = endpoint
      else if (target.status === 'pending') {
        this.#forget(target)
        target.status = 'superseded'
        this.#settled(delivery, target)
      }
    }
    for (const other of added) this.#place(other)
    return item.status === 'pending'
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
      const next = this.#peekReady(lane)
      if (next === undefined) continue
      const { delivery } = next
      if (
        delivery.route.next !== undefined ||
        (delivery.signature === undefined && delivery.route.sign !== undefined)
      ) {
        // Its destination changed while it waited, or it must be signed again: not sent as it is.
        this.#takeReady(lane)
        this.#requeue(next)
        this.#rotate(lane)
        continue
      }
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
    const { delivery } = item
    item.where = 'flight'
    this.#inFlight++
    // Counted as sent: a request still in flight when another URL accepts the event is reported.
    item.attempts++
    // performance.now(): a request's time, below the millisecond on loopback.
    const sentAt = performance.now()
    // The sender never rejects: every failure, a transport's throw or rejection included, is an answer.
    void delivery.route
      .send(item.endpoint, delivery)
      .then((response) => this.#answered(item, permit, response, performance.now() - sentAt))
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
    const accepted = target.status === 'delivered' && delivery.route.mode === 'any'
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
