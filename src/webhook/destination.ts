import { Emitter } from '../core/emitter.js'
import { Queue } from '../core/queue.js'
import { ClosedError } from '../core/errors/closed-error.js'
import { timeoutOption } from '../core/option-checks.js'
import { settlesWithin } from '../core/timers.js'
import type { JsonObject } from '../core/json-value.js'
import type { WebhookEvent } from './event.js'
import { toWebhookError } from './failure.js'
import { signBody } from './callbacks.js'
import { checkEvent } from './prepare.js'
import { MemoryRetryStore, type Due } from './retry-store.js'
import { isDelivered, newDeliveryState, runRound, type DeliveryState } from './round.js'
import { RetryScheduler } from './scheduler.js'
import { createEngine, type WebhookPlatform } from './engine.js'
import type { Endpoint } from './endpoint.js'
import type { Outgoing, Sender } from './sender.js'
import type { ResolvedWebhookSettings, WebhookSettings } from './settings.js'
import type { Signer } from './signer.js'
import type { WebhookTransport } from './transport.js'
import {
  attemptNotices,
  pendingTargets,
  retryNotices,
  toDeliveryResult,
  type AttemptNotice,
  type DeliveryResult,
  type RetryNotice,
} from './result.js'

/** The events a {@link WebhookDestination} emits. */
export interface WebhookDestinationEvents {
  delivered: [result: DeliveryResult]
  failed: [result: DeliveryResult]
  skipped: [result: DeliveryResult]
  retry: [notice: RetryNotice]
  /** After each request to each URL: for live views and per-attempt logs. */
  attempt: [notice: AttemptNotice]
}

/** Options of {@link WebhookDestination.close}. */
export interface WebhookCloseOptions {
  /** Longest wait for requests in flight, in ms. @defaultValue 10_000 */
  timeout?: number | undefined
}

interface Job extends Due {
  readonly state: DeliveryState<Endpoint>
  readonly prepared: Outgoing
  readonly resolve: (result: DeliveryResult) => void
  dueAt: number
}

/**
 * Forwards each platform event as a signed JSON POST to up to five URLs, retrying timeouts,
 * network errors, 5xx, 408 and 429 for up to `retryWindowMs` (4 hours) from the first attempt.
 * One timer serves all pending retries, whatever their number.
 *
 * @example
 * ```ts
 * import { WebhookDestination } from 'eventwire/webhook'
 *
 * const destination = new WebhookDestination({
 *   webhooks: [{ url: 'https://hooks.example.com/in', headers: { 'X-Team': 'data' } }],
 *   sharedSecret: 's3cret',
 * })
 * const result = await destination.deliver({ type: 'track', userId: 'u1', event: 'Paid' })
 * console.log(result.status, result.urls)
 * await destination.close()
 * ```
 */
export class WebhookDestinationBase extends Emitter<WebhookDestinationEvents> {
  readonly #settings: ResolvedWebhookSettings
  readonly #transport: WebhookTransport
  readonly #send: Sender
  readonly #sign: Signer | undefined
  readonly #scheduler = new RetryScheduler<Job>(new MemoryRetryStore<Job>(), (job) => this.#admit(job))
  /**
   * Rounds waiting for request slots, as plain records: a burst of deliveries holds no suspended
   * frames while it waits, which is most of what it would cost in memory and GC.
   */
  readonly #ready = new Queue<Job>()
  #requestsInFlight = 0
  /** Rounds admitted and not ended (waiting or running), and who waits for none to be left (close). */
  #outstanding = 0
  #idle: (() => void) | undefined
  readonly #endpoints: readonly Endpoint[]
  readonly #urls: readonly string[]
  #closing: Promise<void> | undefined

  /**
   * @param platform - What each build sends and signs with: undici and `node:crypto` on Node,
   * `fetch` and Web Crypto elsewhere.
   * @throws {@link OptionsError} naming the first setting it cannot use.
   */
  constructor(settings: WebhookSettings, platform: WebhookPlatform) {
    super()
    const engine = createEngine(settings, platform)
    this.#settings = engine.settings
    this.#endpoints = engine.endpoints
    this.#urls = engine.endpoints.map((endpoint) => endpoint.url)
    this.#transport = engine.transport
    this.#send = engine.send
    this.#sign = engine.sign
  }

  /** The configured URLs, normalized (`http://host` becomes `http://host/`), as results and retry notices name them. */
  get urls(): readonly string[] {
    return this.#urls
  }

  /** Events waiting for a retry. */
  get pendingRetries(): number {
    return this.#scheduler.size
  }

  /**
   * Sends one event to the configured URLs and resolves when it is processed, has finally failed,
   * or was skipped by its `integrations`. Retries happen inside: the promise can stay pending for up
   * to `retryWindowMs`.
   *
   * A user callback that misbehaves does not keep it pending: a transport that throws, rejects or
   * does not answer within `timeoutMs` is a failed attempt (`ERR_NETWORK`, `ERR_TIMEOUT`); a
   * `backoff` or platform signer that throws or returns garbage fails the event (`ERR_CALLBACK`).
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
  async deliver<Data extends object = JsonObject>(event: WebhookEvent<Data>): Promise<DeliveryResult> {
    if (this.#closing !== undefined) throw new ClosedError('deliver()')
    const { eventId, body, enabled } = checkEvent(event)
    if (!enabled) {
      const state = newDeliveryState(eventId, this.#endpoints, 0, Date.now())
      for (const target of state.targets) target.status = 'skipped'
      const result = this.#result(state, 'skipped')
      this.emit('skipped', result)
      return result
    }
    let signature: Awaited<ReturnType<typeof signBody>> | undefined
    if (this.#sign) {
      const signing = signBody(this.#sign, body, this.#settings.timeoutMs)
      // A synchronous signer (node:crypto) needs no tick; Web Crypto's does.
      signature = signing instanceof Promise ? await signing : signing
    }
    const state = newDeliveryState(eventId, this.#endpoints, this.#settings.retryWindowMs, Date.now())
    if (typeof signature === 'object') {
      // Without a signature nothing may be sent: every URL fails with the signer's fault.
      for (const target of state.targets) {
        target.status = 'failed'
        target.failure = { code: 'ERR_CALLBACK', callback: 'signer', cause: signature.cause }
      }
      const result = this.#result(state, 'failed')
      this.emit('failed', result)
      return result
    }
    return new Promise<DeliveryResult>((resolve) =>
      this.#admit({ state, prepared: { eventId, body, signature }, resolve, dueAt: 0 }),
    )
  }

  /**
   * Refuses new events, reports events waiting for a retry as failed (`ERR_CLOSED`: the in-memory
   * store cannot keep them), waits up to `timeout` ms for requests in flight, and releases
   * connections. Safe to call more than once.
   */
  close(options: WebhookCloseOptions = {}): Promise<void> {
    const timeout = timeoutOption('timeout', options.timeout, 10_000)
    this.#closing ??= this.#shutdown(timeout)
    return this.#closing
  }

  #admit(job: Job): void {
    this.#outstanding++
    this.#ready.push(job)
    this.#dispatch()
  }

  /** Starts waiting rounds while their requests fit in `maxConcurrency` (one always may start). */
  #dispatch(): void {
    for (let job = this.#ready.peek(); job !== undefined; job = this.#ready.peek()) {
      const requests = job.state.targets.reduce((count, target) => (target.status === 'pending' ? count + 1 : count), 0)
      if (this.#requestsInFlight > 0 && this.#requestsInFlight + requests > this.#settings.maxConcurrency) return
      this.#ready.shift()
      this.#requestsInFlight += requests
      const ended = () => {
        this.#requestsInFlight -= requests
        if (--this.#outstanding === 0) this.#idle?.()
        this.#dispatch()
      }
      this.#round(job).then(ended, (error: unknown) => {
        ended()
        throw error
      })
    }
  }

  async #round(job: Job): Promise<void> {
    const attempted = this.listenerCount('attempt') > 0 ? pendingTargets(job.state) : undefined
    const decision = await runRound(job.state, this.#settings, (endpoint) => this.#send(endpoint, job.prepared))
    if (attempted) for (const notice of attemptNotices(job.state.eventId, attempted)) this.emit('attempt', notice)
    if (decision.kind === 'finished') {
      this.#finish(job, decision.delivered ? 'delivered' : 'failed')
    } else if (this.#closing !== undefined) {
      this.#abandon(job)
    } else {
      job.dueAt = decision.dueAt
      if (this.listenerCount('retry') > 0) {
        for (const notice of retryNotices(job.state, decision.dueAt)) this.emit('retry', notice)
      }
      // A retry listener may have called close(): the stopped scheduler must not take the job.
      if (this.#closing !== undefined) this.#abandon(job)
      else this.#scheduler.schedule(job)
    }
  }

  #finish(job: Job, status: 'delivered' | 'failed'): void {
    const result = this.#result(job.state, status)
    this.emit(status, result)
    job.resolve(result)
  }

  /** Reports an event that will not be retried because the destination is closing. */
  #abandon(job: Job): void {
    for (const target of job.state.targets) {
      if (target.status !== 'pending') continue
      target.status = 'failed'
      const cause = target.failure ? toWebhookError(target.failure, target.endpoint) : undefined
      target.failure = { code: 'ERR_CLOSED', ...(cause ? { cause } : {}) }
    }
    this.#finish(job, isDelivered(job.state, this.#settings.mode) ? 'delivered' : 'failed')
  }

  #result(state: DeliveryState<Endpoint>, status: DeliveryResult['status']): DeliveryResult {
    return toDeliveryResult(state, status)
  }

  async #shutdown(timeout: number): Promise<void> {
    for (const job of this.#scheduler.stop()) this.#abandon(job)
    const settled = new Promise<void>((resolve) => {
      if (this.#outstanding === 0) resolve()
      else this.#idle = resolve
    })
    // Requests still in flight end within timeoutMs; connections are released after them.
    const deadline = Date.now() + timeout
    if (await settlesWithin(settled, timeout))
      await settlesWithin(this.#closeTransport(), Math.max(0, deadline - Date.now()))
    else void settled.then(() => this.#closeTransport())
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
