import { monotonicNow, monotonicSince } from '../../core/clock.js'
import { Emitter } from '../../core/emitter.js'
import { ClosedError } from '../../core/errors/closed-error.js'
import type { GroupInput, IdentifyInput, NoPlan, SchemaPlan, TrackInput, TrackingPlan } from '../../core/plan.js'
import { timeoutOption } from '../../core/option-checks.js'
import { settlesWithin } from '../../core/timers.js'
import type { JsonObject } from '../../core/json-value.js'
import type { CircuitState } from './circuit-breaker.js'
import type { WebhookEvent } from '../event/event.js'
import { DeliveryRounds, type DeliveryEvents, type Prepared } from './rounds.js'
import { checkEvent, followPlan, takePlan, type CheckedEvent } from '../event/prepare.js'
import { newDeliveryState } from './state.js'
import { createEngine, type WebhookPlatform } from './engine-parts.js'
import type { Endpoint } from '../network/endpoint.js'
import type { WebhookSettings } from './settings.js'
import type { WebhookTransport } from '../network/transport.js'
import { attemptNotice, retryNotice, toDeliveryResult, type DeliveryResult } from './result.js'
import { UrlLanes, type UrlBacklog } from './url-lanes.js'

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
  readonly #rounds: DeliveryRounds
  /** One lane per URL: the unit of work is one attempt to one URL (see `url-lanes.ts`). */
  readonly #lanes: UrlLanes
  /** Events accepted and not ended, and who waits for none to be left (close). */
  #outstanding = 0
  #idle: (() => void) | undefined
  readonly #endpoints: readonly Endpoint[]
  readonly #urls: readonly string[]
  #closing: Promise<void> | undefined

  /**
   * @param platform - What it sends and signs with: HTTP/1.1 on `node:net` and `node:crypto` on Node, `fetch` and
   * Web Crypto elsewhere (`platform/`).
   * @throws {@link OptionsError} naming the first setting it cannot use.
   */
  constructor(settings: WebhookSettings & WebhookPlanOption<Plan>, platform: WebhookPlatform) {
    super()
    const { plan, rest } = takePlan(settings)
    this.#plan = plan
    const engine = createEngine(rest, platform)
    this.#endpoints = engine.endpoints
    this.#urls = engine.endpoints.map((endpoint) => endpoint.url)
    this.#transport = engine.transport
    // In memory, waits and windows live in this process: a monotonic clock keeps them honest. It
    // counts milliseconds from here: small integers, kept inside a waiting delivery's objects
    // where epoch-sized times would be boxed (see monotonicSince).
    const origin = monotonicNow()
    const clock = monotonicSince(origin)
    this.#rounds = new DeliveryRounds(
      engine,
      {
        listenerCount: (event) => this.listenerCount(event),
        // Named as the union: TypeScript cannot match DeliveryEvents[Name] to these events for a generic Name.
        emit: (event, ...args) => this.emit<keyof DeliveryEvents>(event, ...args),
      },
      clock,
    )
    this.#lanes = new UrlLanes(engine.settings, engine.endpoints, engine.sendUnbounded, engine.sign, clock, {
      attempted: (delivery, target, durationMs) => {
        if (this.listenerCount('attempt') === 0) return
        this.emit('attempt', attemptNotice(delivery.eventId, target, durationMs))
      },
      retrying: (delivery, target, dueAt) => {
        if (this.listenerCount('retry') === 0 || target.failure === undefined) return
        // A notice gives an epoch time.
        this.emit('retry', retryNotice(delivery.eventId, target, target.failure, dueAt + origin))
      },
      finished: (delivery) => {
        delivery.resolve(this.#rounds.finish(delivery, delivery.startedAt))
        this.#settledOne()
      },
      circuit: (url, circuit) => this.emit('url-state', { url, circuit }),
    })
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
  deliver<Data extends object = JsonObject>(event: WebhookEventInput<Plan, Data>): Promise<DeliveryResult> {
    let checked: CheckedEvent
    try {
      if (this.#closing !== undefined) throw new ClosedError('deliver()')
      checked = checkEvent(this.#plan === undefined ? event : followPlan(this.#plan, event, 'deliver()'))
      this.#rounds.checkId(checked.eventId, 'deliver()')
    } catch (error) {
      return Promise.reject(error)
    }
    const { eventId, body, enabled } = checked
    // On the rounds' (and lanes') clock: the result's durationMs counts from here, signing included.
    const startedAt = this.#rounds.now()
    if (!enabled) {
      const state = newDeliveryState(eventId, this.#endpoints, 0, Date.now())
      for (const target of state.targets) target.status = 'skipped'
      const result = toDeliveryResult(state, 'skipped')
      this.emit('skipped', result)
      return Promise.resolve(result)
    }
    // Counted from here, not once signed: close() waits for an event Web Crypto is still signing.
    this.#outstanding++
    const preparing = this.#rounds.prepare(eventId, body)
    // A synchronous signer (node:crypto) needs no tick; Web Crypto's does. Not an async function:
    // its frame and outer promise would stay alive for as long as the event waits (hours, when
    // retried), which is most of what a waiting delivery would cost.
    return preparing instanceof Promise
      ? preparing.then((prepared) => this.#begin(eventId, prepared, startedAt))
      : this.#begin(eventId, preparing, startedAt)
  }

  /** Starts an event's first round, or ends it at once when its body could not be signed. */
  #begin(eventId: string, prepared: Prepared, startedAt: number): Promise<DeliveryResult> {
    if ('cause' in prepared) {
      // Failed before it took a request slot: no round to wait for.
      const state = this.#rounds.start(eventId)
      this.#rounds.refuseUnsigned(state, prepared)
      const result = this.#rounds.finish(state, startedAt)
      this.#settledOne()
      return Promise.resolve(result)
    }
    return new Promise<DeliveryResult>((resolve) => this.#lanes.add(prepared, startedAt, resolve))
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
      // The deadline: nothing more is sent. What is still queued for a slot ends now; requests in
      // flight end within timeoutMs, and the connections are released after them.
      this.#lanes.abandon()
      void settled.then(() => this.#closeTransport())
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
