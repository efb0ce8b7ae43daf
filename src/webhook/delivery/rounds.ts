import { signBody, type CallbackFailure } from './callbacks.js'
import type { Endpoint } from '../network/endpoint.js'
import type { EngineParts } from './engine-parts.js'
import {
  attemptNotice,
  retryNotices,
  toDeliveryResult,
  type AttemptNotice,
  type DeliveryResult,
  type RetryNotice,
} from './result.js'
import type { Clock } from '../../core/clock.js'
import {
  isDelivered,
  newDeliveryState,
  type DeliveryState,
  type RoundDecision,
  type RoundRules,
  type TargetState,
} from './state.js'
import { runUrlRound, type Admission } from './url-round.js'
import type { Outgoing } from './sender.js'
import type { WebhookResponse } from '../network/transport.js'
import { ValidationError } from '../../core/errors/validation-error.js'

function idWithDot(eventId: string): string {
  return `the event id ${JSON.stringify(eventId)} contains a ".", which Standard Webhooks does not allow in webhook-id (it separates what is signed). Give the event a messageId without one.`
}

/**
 * Refuses an event id Standard Webhooks cannot carry (one with a `.`, the separator of what it
 * signs): for events to a destination that signs that way.
 *
 * @throws {@link ValidationError} `ERR_INVALID_FIELD` on `messageId`; `caller` opens the message.
 */
export function refuseDottedId(eventId: string, caller: string): void {
  if (eventId.includes('.'))
    throw new ValidationError('ERR_INVALID_FIELD', 'messageId', `${caller}: ${idWithDot(eventId)}`)
}

/** What every delivery engine, in memory or on BullMQ, tells about the events it delivers. */
export interface DeliveryEvents {
  /** An event was accepted: by any URL in mode `'any'`, by every URL in mode `'each'`. */
  delivered: [result: DeliveryResult]
  /** An event will not be delivered: no retry is left. Each URL's `lastError` says why. */
  failed: [result: DeliveryResult]
  /** A URL will be tried again at `retryAt`: one notice per URL, after each round that leaves the event pending. */
  retry: [notice: RetryNotice]
  /** After each request to each URL: for live views and per-attempt logs. */
  attempt: [notice: AttemptNotice]
}

/**
 * Where the notices of rounds go: the engine's own emitter, whose `emit` is protected, so the
 * engine hands these two over.
 */
export interface RoundAudience {
  /** How many listeners `event` has: notices that nobody listens to are not built. */
  listenerCount(event: 'attempt' | 'retry'): number
  emit<Name extends keyof DeliveryEvents>(event: Name, ...args: DeliveryEvents[Name]): unknown
}

/** An event's bytes as every attempt sends them, or the signer's failure to sign them. */
export type Prepared = Outgoing | CallbackFailure

/**
 * What both engines (the in-memory destination and the BullMQ worker) do with an event under one
 * engine's settings: where it starts, how its body is signed, how it ends and what is told. The
 * worker also runs its rounds here ({@link runUrls}); the in-memory engine sends through its lanes
 * (`url-lanes.ts`).
 */
export class DeliveryRounds {
  readonly #engine: EngineParts
  readonly #audience: RoundAudience
  readonly #rules: RoundRules
  /** The registry destination these rounds serve, named in every result and notice; `undefined` for the engine's own `webhooks`. */
  readonly destination: string | undefined

  /**
   * @param clock - What deadlines and due times are measured on: `monotonicNow` where they live in
   * memory, `Date.now` where they are stored.
   */
  constructor(engine: EngineParts, audience: RoundAudience, clock: Clock, destination?: string) {
    this.#engine = engine
    this.#audience = audience
    this.#rules = { mode: engine.settings.mode, backoff: engine.settings.backoff, now: clock }
    this.destination = destination
  }

  /** The clock this engine's deadlines and due times are on. */
  get now(): Clock {
    return this.#rules.now
  }

  /** A fresh state: every configured URL waiting for its first attempt, the retry window starting now. */
  start(eventId: string): DeliveryState<Endpoint> {
    return newDeliveryState(eventId, this.#engine.endpoints, this.#engine.settings.retryWindowMs, this.#rules.now())
  }

  /**
   * Signs `body` once for all the attempts that send it. A signer that throws, rejects, returns
   * what cannot be a header value or does not answer within `timeoutMs` gives its failure instead
   * (see {@link signBody}). No promise without a signer or with a synchronous one (node:crypto).
   */
  prepare(eventId: string, body: string): Prepared | Promise<Prepared> {
    const sign = this.#engine.sign
    if (sign === undefined) return { eventId, body, signature: undefined }
    const signing = signBody(sign, body, this.#engine.settings.timeoutMs)
    const outgoing = (signature: string | CallbackFailure): Prepared =>
      typeof signature === 'string' ? { eventId, body, signature } : signature
    return signing instanceof Promise ? signing.then(outgoing) : outgoing(signing)
  }

  /**
   * Ends an event whose body could not be signed: without a signature nothing may be sent, so each
   * URL still pending fails with the signer's fault (`ERR_CALLBACK`).
   */
  refuseUnsigned(state: DeliveryState<Endpoint>, failure: CallbackFailure): RoundDecision {
    for (const target of state.targets) {
      if (target.status !== 'pending') continue
      target.status = 'failed'
      target.failure = { code: 'ERR_CALLBACK', callback: 'signer', cause: failure.cause }
    }
    return { kind: 'finished', delivered: isDelivered(state, this.#engine.settings.mode) }
  }

  /**
   * Sends to the URLs of `state` that are due and that `admit` lets through, each on its own
   * timeline (see {@link runUrlRound}: a worker's round), tells each attempt, and says what comes
   * next.
   */
  async runUrls(
    state: DeliveryState<Endpoint>,
    outgoing: Outgoing,
    admit: (target: TargetState<Endpoint>) => Admission | Promise<Admission>,
  ): Promise<RoundDecision> {
    if (this.#engine.stamp !== undefined && outgoing.eventId.includes('.')) {
      return this.refuseUnsigned(state, { cause: new Error(idWithDot(outgoing.eventId)) })
    }
    // Each attempt is told as it is answered; one aborted by another URL's 2xx is not.
    const durations = this.#audience.listenerCount('attempt') > 0 ? new Map<Endpoint, number>() : undefined
    const told =
      durations &&
      ((target: TargetState<Endpoint>) =>
        this.#audience.emit(
          'attempt',
          attemptNotice(state.eventId, target, durations.get(target.endpoint), this.destination),
        ))
    return runUrlRound(state, this.#rules, admit, this.#sender(outgoing, durations), told)
  }

  /**
   * The engine's send of `outgoing`; with `durations`, each request's time goes there by endpoint
   * (taken only for notices that will be told).
   */
  #sender(
    outgoing: Outgoing,
    durations: Map<Endpoint, number> | undefined,
  ): (endpoint: Endpoint, signal: AbortSignal | undefined) => Promise<WebhookResponse> {
    return (endpoint, signal) => {
      const sending = this.#engine.send(endpoint, outgoing, signal)
      if (durations === undefined) return sending
      const sentAt = performance.now()
      return sending.then((response) => {
        durations.set(endpoint, performance.now() - sentAt)
        return response
      })
    }
  }

  /**
   * Refuses an event id Standard Webhooks cannot carry (one with a `.`, the separator of what it
   * signs), when requests are signed that way.
   *
   * @throws {@link ValidationError} `ERR_INVALID_FIELD` on `messageId`.
   */
  checkId(eventId: string, caller: string): void {
    if (this.#engine.stamp !== undefined) refuseDottedId(eventId, caller)
  }

  /** Tells that the URLs still pending will be tried again at `dueAt` (epoch ms on this engine's clock). */
  announceRetry(state: DeliveryState<Endpoint>, dueAt: number): void {
    if (this.#audience.listenerCount('retry') === 0) return
    for (const notice of retryNotices(state, dueAt, this.destination)) this.#audience.emit('retry', notice)
  }

  /**
   * Reports a finished event: `'delivered'` when the mode's rule says so (see {@link isDelivered}),
   * else `'failed'`; returns the result told. `startedAt`: when the event was handed to the engine,
   * on this engine's clock ({@link now}), for the result's `durationMs`.
   */
  finish(state: DeliveryState<Endpoint>, startedAt?: number): DeliveryResult {
    const status = isDelivered(state, this.#engine.settings.mode) ? 'delivered' : 'failed'
    const result = toDeliveryResult(
      state,
      status,
      startedAt === undefined ? undefined : Math.max(0, this.#rules.now() - startedAt),
      this.destination,
    )
    this.#audience.emit(status, result)
    return result
  }
}
