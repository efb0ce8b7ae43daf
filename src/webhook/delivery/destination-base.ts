import { monotonicNow, monotonicSince } from '../../core/clock.js'
import { Emitter } from '../../core/emitter.js'
import { ClosedError } from '../../core/errors/closed-error.js'
import type { GroupInput, IdentifyInput, NoPlan, SchemaPlan, TrackInput, TrackingPlan } from '../../core/plan.js'
import { checkOptionNames, timeoutOption } from '../../core/option-checks.js'
import { isObject } from '../../core/validate.js'
import { settlesWithin } from '../../core/timers.js'
import type { JsonObject } from '../../core/json-value.js'
import type { CircuitState } from './circuit-breaker.js'
import type { WebhookEvent } from '../event/event.js'
import { DeliveryRounds, type DeliveryEvents, type Prepared, type RoundAudience } from './rounds.js'
import { checkEvent, followPlan, takePlan, type CheckedEvent } from '../event/prepare.js'
import { newDeliveryState } from './state.js'
import { createEngine, partsFor, type EngineParts, type WebhookPlatform } from './engine-parts.js'
import type { DestinationsSettings, WebhookSettings } from './settings.js'
import type { WebhookTransport } from '../network/transport.js'
import { attemptNotice, retryNotice, toDeliveryResult, type DeliveryResult } from './result.js'
import { UrlLanes, type UrlBacklog } from './url-lanes.js'
import { MemoryDestinations } from './memory-destinations.js'
import { checkDestinationId, type ResolvedDestination } from './destination-record.js'
import type { Route } from './route.js'
import { UnknownDestinationError } from './unknown-destination-error.js'
import { OptionsError } from '../../core/errors/options-error.js'
import type { Clock } from '../../core/clock.js'

/** A URL's circuit breaker changed state: `'open'` (its deliveries wait), `'half-open'` (one probe goes), `'closed'`. */
export interface UrlStateNotice {
  readonly url: string
  readonly circuit: CircuitState
}

/** The events a {@link WebhookDestination} emits: those of every delivery engine, `skipped` and `url-state`. */
export interface WebhookDestinationEvents extends DeliveryEvents {
  /** An event's `integrations` turn this destination off: nothing was sent. */
  skipped: [result: DeliveryResult]
  /** A URL's circuit breaker opened, let a probe through, or closed. */
  'url-state': [notice: UrlStateNotice]
}

/** The `plan` setting of {@link WebhookDestination}, apart from the settings its queue and worker share. */
export interface WebhookPlanOption<Plan> {
  /**
   * A tracking plan made with `definePlan`: every event is checked by it before it is delivered
   * (one that breaks it is refused with `ERR_PLAN_VIOLATION`; what is delivered is the schema's
   * output), and `deliver` is typed by it.
   */
  plan?: Plan | undefined
}

/**
 * What `deliver` takes: any event without a plan; under a plan, `track` events of its names with
 * their properties, and `identify` and `group` events with its traits.
 */
export type WebhookEventInput<Plan, Data extends object> = [Plan] extends [NoPlan]
  ? WebhookEvent<Data>
  :
      | ({ type: 'track' } & TrackInput<Plan, JsonObject>)
      | ({ type: 'identify' } & IdentifyInput<Plan, JsonObject>)
      | ({ type: 'group' } & GroupInput<Plan, JsonObject>)
      | Exclude<WebhookEvent, { type: 'track' | 'identify' | 'group' }>

/** Options of {@link WebhookDestination.deliver}. */
export interface DeliverOptions {
  /**
   * The id of a destination of `destinations`: the event goes to its URLs, signed with its
   * secrets. Without it, the event goes to the engine's own `webhooks`.
   */
  destination?: string | undefined
}

const DELIVER_OPTIONS: Readonly<Record<keyof DeliverOptions, true>> = { destination: true }

/** Options of {@link WebhookDestination.close}. */
export interface WebhookCloseOptions {
  /** Longest wait for requests in flight, in ms. @defaultValue 10_000 */
  timeout?: number | undefined
}

/**
 * What {@link WebhookDestination} does, with the platform it is given to send and sign with:
 * `WebhookDestination` gives it the runtime's (`platform/`), tests give it each platform's in
 * turn on Node, or one of their own.
 */
export class WebhookDestinationBase<
  Plan extends TrackingPlan | NoPlan = NoPlan,
> extends Emitter<WebhookDestinationEvents> {
  /** The tracking plan every delivered event must follow, if one was given. */
  readonly #plan: SchemaPlan | undefined
  readonly #transport: WebhookTransport
  /** How events to the engine's own `webhooks` are sent; none without them. */
  readonly #own: Route | undefined
  readonly #destinations: MemoryDestinations
  /** Where every route's rounds tell their results and notices: this emitter, whose `emit` is protected. */
  readonly #audience: RoundAudience = {
    listenerCount: (event) => this.listenerCount(event),
    // Named as the union: TypeScript cannot match DeliveryEvents[Name] to these events for a generic Name.
    emit: (event, ...args) => this.emit<keyof DeliveryEvents>(event, ...args),
  }
  /** One lane per URL: the unit of work is one attempt to one URL (see `url-lanes.ts`). */
  readonly #lanes: UrlLanes
  /** Events accepted and not ended, and who waits for none to be left (close). */
  #outstanding = 0
  #idle: (() => void) | undefined
  readonly #urls: readonly string[]
  #closing: Promise<void> | undefined

  /**
   * @param platform - What it sends and signs with: HTTP/1.1 on `node:net` and `node:crypto` on Node, `fetch` and
   * Web Crypto elsewhere (`platform/`).
   * @throws {@link OptionsError} naming the first setting it cannot use.
   */
  constructor(settings: (WebhookSettings | DestinationsSettings) & WebhookPlanOption<Plan>, platform: WebhookPlatform) {
    super()
    const { plan, rest } = takePlan(settings)
    this.#plan = plan
    const engine = createEngine(rest as WebhookSettings, platform, undefined, 'optional')
    this.#urls = engine.endpoints.map((endpoint) => endpoint.url)
    this.#transport = engine.transport
    // In memory, waits and windows live in this process: a monotonic clock keeps them honest. It
    // counts milliseconds from here: small integers, kept inside a waiting delivery's objects
    // where epoch-sized times would be boxed (see monotonicSince).
    const origin = monotonicNow()
    const clock = monotonicSince(origin)
    this.#own = engine.endpoints.length === 0 ? undefined : this.#route(engine, undefined, undefined, clock)
    this.#destinations = new MemoryDestinations((destination) =>
      this.#route(
        partsFor(engine, destination),
        destination,
        destination.enabled ? undefined : 'ERR_DESTINATION_DISABLED',
        clock,
      ),
    )
    this.#lanes = new UrlLanes(engine.settings, engine.endpoints, clock, {
      attempted: (delivery, target, durationMs) => {
        if (this.listenerCount('attempt') === 0) return
        this.emit('attempt', attemptNotice(delivery.eventId, target, durationMs, delivery.route.destination))
      },
      retrying: (delivery, target, dueAt) => {
        if (this.listenerCount('retry') === 0 || target.failure === undefined) return
        // A notice gives an epoch time.
        this.emit(
          'retry',
          retryNotice(delivery.eventId, target, target.failure, dueAt + origin, delivery.route.destination),
        )
      },
      finished: (delivery) => {
        delivery.resolve(delivery.route.rounds.finish(delivery, delivery.startedAt))
        this.#settledOne()
      },
      circuit: (url, circuit) => this.emit('url-state', { url, circuit }),
    })
  }

  /** How the events of one destination (`undefined`: the engine's own `webhooks`) are sent, signed and reported. */
  #route(parts: EngineParts, destination: ResolvedDestination | undefined, ended: Route['ended'], clock: Clock): Route {
    return {
      destination: destination?.id,
      endpoints: parts.endpoints,
      send: parts.sendUnbounded,
      sign: parts.sign,
      mode: parts.settings.mode,
      rounds: new DeliveryRounds(parts, this.#audience, clock, destination?.id),
      ended,
      next: undefined,
    }
  }

  /**
   * The destinations this engine delivers to besides its own `webhooks`: each an id, up to five
   * URLs with their headers, its secrets and mode (see docs/destinations.md). Name one in
   * `deliver(event, { destination })`.
   *
   * @example
   * ```ts
   * import { WebhookDestination } from 'eventwire/webhook'
   *
   * const engine = new WebhookDestination({ timeoutMs: 5_000 })
   * engine.destinations.set({ id: 'acme', webhooks: [{ url: 'https://hooks.acme.example/in' }], sharedSecret: 'acme-s3cret' })
   * await engine.deliver({ type: 'track', userId: 'u1', event: 'Paid' }, { destination: 'acme' })
   * ```
   */
  get destinations(): MemoryDestinations {
    return this.#destinations
  }

  /** The configured URLs, normalized (`http://host` becomes `http://host/`), as results and retry notices name them. */
  get urls(): readonly string[] {
    return this.#urls
  }

  /** Deliveries (an event at one URL) waiting for a retry, or for their URL's breaker. */
  get pendingRetries(): number {
    return this.#lanes.waiting
  }

  /**
   * How many deliveries wait for each URL (queued for a slot, waiting for a retry or the breaker)
   * and are in flight, and where each URL's circuit breaker stands; in the order configured.
   *
   * @example
   * ```ts
   * import { WebhookDestination } from 'eventwire/webhook'
   *
   * const destination = new WebhookDestination({ webhooks: [{ url: 'https://hooks.example.com/in' }] })
   * for (const url of destination.backlog()) console.log(url.url, url.queued, url.retrying, url.circuit)
   * ```
   */
  backlog(): UrlBacklog[] {
    return this.#lanes.backlog()
  }

  /**
   * Sends one event to the configured URLs and resolves when it is processed, has finally failed,
   * or was skipped by its `integrations`. Retries happen inside: the promise can stay pending for up
   * to `retryWindowMs`.
   *
   * A user callback that misbehaves does not keep it pending: a transport that throws, rejects or
   * does not answer within `timeoutMs` is a failed attempt (`ERR_NETWORK`, `ERR_TIMEOUT`); a
   * `backoff` that throws or returns garbage, or a signature the runtime's crypto cannot compute,
   * fails the event (`ERR_CALLBACK`).
   *
   * @throws {@link ValidationError} (as a rejection) for an event that cannot become a payload,
   * naming the field or path, even when its `integrations` would skip it; {@link ClosedError}
   * after `close()`.
   * @example
   * ```ts
   * import { WebhookDestination } from 'eventwire/webhook'
   *
   * const destination = new WebhookDestination({ webhooks: [{ url: 'https://hooks.example.com/in' }], sharedSecret: 's3cret' })
   * const result = await destination.deliver({ type: 'identify', userId: 'u1', traits: { plan: 'pro' } })
   * if (result.status === 'failed') {
   *   for (const url of result.urls) console.error(url.url, url.lastStatus, url.lastError?.code)
   * }
   * await destination.close()
   * ```
   */
  deliver<Data extends object = JsonObject>(
    event: WebhookEventInput<Plan, Data>,
    options?: DeliverOptions,
  ): Promise<DeliveryResult> {
    let checked: CheckedEvent
    let route: Route
    try {
      if (this.#closing !== undefined) throw new ClosedError('deliver()')
      route = this.#routeFor(options)
      checked = checkEvent(this.#plan === undefined ? event : followPlan(this.#plan, event, 'deliver()'))
      route.rounds.checkId(checked.eventId, 'deliver()')
    } catch (error) {
      return Promise.reject(error)
    }
    const { eventId, body, enabled } = checked
    const { rounds } = route
    // On the rounds' (and lanes') clock: the result's durationMs counts from here, signing included.
    const startedAt = rounds.now()
    if (!enabled) {
      const state = newDeliveryState(eventId, route.endpoints, 0, Date.now())
      for (const target of state.targets) target.status = 'skipped'
      const result = toDeliveryResult(state, 'skipped', undefined, route.destination)
      this.emit('skipped', result)
      return Promise.resolve(result)
    }
    if (route.ended !== undefined) {
      // A disabled destination: told as any event that failed at every URL, and nothing is sent.
      const state = rounds.start(eventId)
      for (const target of state.targets) {
        target.status = 'failed'
        target.failure = { code: route.ended }
      }
      return Promise.resolve(rounds.finish(state, startedAt))
    }
    // Counted from here, not once signed: close() waits for an event Web Crypto is still signing.
    this.#outstanding++
    const preparing = rounds.prepare(eventId, body)
    // A synchronous signer (node:crypto) needs no tick; Web Crypto's does. Not an async function:
    // its frame and outer promise would stay alive for as long as the event waits (hours, when
    // retried), which is most of what a waiting delivery would cost.
    return preparing instanceof Promise
      ? preparing.then((prepared) => this.#begin(route, eventId, prepared, startedAt))
      : this.#begin(route, eventId, preparing, startedAt)
  }

  /**
   * The route of the destination `options` name, or of the engine's own `webhooks`.
   *
   * @throws `OptionsError` for a bad id or options, or when there is no destination and no `webhooks`;
   *   {@link UnknownDestinationError} for an id `destinations` does not hold.
   */
  #routeFor(options: DeliverOptions | undefined): Route {
    if (options !== undefined) {
      if (!isObject(options)) throw new OptionsError('options', 'expected { destination? }.')
      checkOptionNames(options, DELIVER_OPTIONS, { destinationId: 'destination', id: 'destination' })
    }
    const destination = options?.destination
    if (destination === undefined) {
      if (this.#own !== undefined) return this.#own
      throw new OptionsError(
        'destination',
        'this WebhookDestination has no `webhooks` of its own: name one of its destinations, deliver(event, { destination: id }), or give it `webhooks`.',
      )
    }
    checkDestinationId(destination)
    const route = this.#destinations.routeOf(destination)
    if (route === undefined) throw new UnknownDestinationError(destination)
    return route
  }

  /** Starts an event's first round, or ends it at once when its body could not be signed. */
  #begin(route: Route, eventId: string, prepared: Prepared, startedAt: number): Promise<DeliveryResult> {
    if ('cause' in prepared) {
      // Failed before it took a request slot: no round to wait for.
      const state = route.rounds.start(eventId)
      route.rounds.refuseUnsigned(state, prepared)
      const result = route.rounds.finish(state, startedAt)
      this.#settledOne()
      return Promise.resolve(result)
    }
    return new Promise<DeliveryResult>((resolve) => this.#lanes.add(prepared, route, startedAt, resolve))
  }

  /** An event counted by deliver() has its outcome: close() may be waiting for the last one. */
  #settledOne(): void {
    if (--this.#outstanding === 0) this.#idle?.()
  }

  /**
   * Refuses new events, reports URLs waiting for a retry as failed (`ERR_CLOSED`: the in-memory
   * store cannot keep them), sends what is queued for a slot and waits for it, up to `timeout` ms,
   * and releases connections. At the deadline, what is still queued ends with `ERR_CLOSED`
   * unsent: nothing is sent after `close()` resolves. Safe to call more than once.
   */
  close(options: WebhookCloseOptions = {}): Promise<void> {
    const timeout = timeoutOption('timeout', options.timeout, 10_000)
    this.#closing ??= this.#shutdown(timeout)
    return this.#closing
  }

  async #shutdown(timeout: number): Promise<void> {
    this.#lanes.close()
    const settled = new Promise<void>((resolve) => {
      if (this.#outstanding === 0) resolve()
      else this.#idle = resolve
    })
    // Requests still in flight end within timeoutMs; connections are released after them.
    const deadline = monotonicNow() + timeout
    if (await settlesWithin(settled, timeout))
      await settlesWithin(this.#closeTransport(), Math.max(0, deadline - monotonicNow()))
    else {
      // The deadline: nothing more is sent. What is still queued for a slot ends now, and so does
      // what the transport holds unsent (waiting for a connection): it is closed now. Requests in
      // flight end within timeoutMs, and their connections close after them.
      this.#lanes.abandon()
      void this.#closeTransport()
    }
  }

  /**
   * Releases the transport's connections. A transport of the user's may hang or fail here: that
   * must neither hold `close()` past its deadline nor make it reject, so its failure is only told.
   */
  async #closeTransport(): Promise<void> {
    try {
      await this.#transport.close?.()
    } catch (error) {
      try {
        this.onListenerError(error)
      } catch {
        // Nowhere left to report it.
      }
    }
  }
}
