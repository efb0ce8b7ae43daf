import type { Job } from 'bullmq'
import { Emitter } from '../../core/emitter.js'
import { ClosedError } from '../../core/errors/closed-error.js'
import { EventwireError } from '../../core/errors/eventwire-error.js'
import { ValidationError } from '../../core/errors/validation-error.js'
import type { JsonObject } from '../../core/json-value.js'
import { settlesWithin } from '../../core/timers.js'
import { closeWithin } from './close-within.js'
import type { NoPlan, SchemaPlan, TrackingPlan } from '../../core/plan.js'
import type { WebhookEventInput, WebhookPlanOption } from '../delivery/destination-base.js'
import { checkEvent, followPlan, takePlan } from '../event/prepare.js'
import { DurabilityWatch } from './durability-watch.js'
import {
  destinationOfJob,
  eventIdOfJob,
  freshData,
  jobIdOf,
  type StoredTarget,
  type WebhookJobData,
} from './job-data.js'
import { DEAD_LETTER_DEFAULTS, DEFAULT_DEDUP_WINDOW_MS, keepDeadLetters, resolveQueueOptions } from './options.js'
import type { WebhookQueueOptions } from './queue-options.js'
import { BulkValidationError } from './bulk-validation-error.js'
import { refuseDottedId } from '../delivery/rounds.js'
import { redisReplyOf, refusedBy } from './redis-refused-error.js'
import { RedisTimeoutError } from './redis-timeout-error.js'
import { StoreBatcher } from './store-batch.js'
import { storeOnce, type EventToStore, type StoreOptions } from './store-once.js'
import { ReplicaAck } from './replica-ack.js'
import { unreadableReason } from './stored-job.js'
import { StoredJobQueue } from './stored-queue.js'
import { HeldJobs, type HeldStore, type HeldUrl } from './held-jobs.js'
import { DestinationCache } from './destination-cache.js'
import { Registry, type RegistryStore } from './registry.js'
import { UnknownDestinationError } from '../delivery/unknown-destination-error.js'
import { WebhookDestinations } from './webhook-destinations.js'
import { WebhookSources } from './webhook-sources.js'
import { checkDestinationId } from '../delivery/destination-record.js'
import { OptionsError } from '../../core/errors/options-error.js'
import { checkOptionNames } from '../../core/option-checks.js'
import { parkedCount, type ParkedStore } from './fair-queueing.js'
import { eachSent, resolveReplayOptions, type ReplayOptions, type ReplayResult, type SentReadStore } from './replay.js'
import {
  readAttempts,
  resolveAttemptsOptions,
  type AttemptReadStore,
  type AttemptsOptions,
  type LoggedAttempt,
} from './logged-attempt.js'

/** What {@link WebhookQueue.counts} returns. */
export interface QueueCounts {
  /** Events waiting for a worker, `parked` included. */
  readonly waiting: number
  /**
   * Of `waiting`: events parked behind their own destination's backlog. Each destination has a
   * bounded number of events in the line the workers take from; its others wait in a line of its
   * own, so that its backlog holds up no other destination (see docs/destinations.md, "Fairness
   * between destinations"). BullMQ's own counts and dashboards do not see parked events.
   */
  readonly parked: number
  /**
   * Events waiting for their next attempt: `retrying`, `heldByBreaker` and `heldForSlots`
   * together, and those whose time has come that no worker has taken yet.
   */
  readonly delayed: number
  /** Of `delayed`: events waiting for a retry after a failed attempt. */
  readonly retrying: number
  /** Of `delayed`: events held back by an open breaker at one of their URLs, across every worker. */
  readonly heldByBreaker: number
  /** Of `delayed`: events held back because a URL's slots or its `ratePerUrl` were taken. */
  readonly heldForSlots: number
  /** Events a worker is delivering now. */
  readonly active: number
  /** Dead letters. */
  readonly failed: number
  /**
   * How late the work is, in ms: how long the next event a worker takes has been due (since it
   * was enqueued, or since its retry or hold ended), or a delayed event whose time has come, if
   * that is longer. `undefined` with nothing due. What to watch for the workers keeping up.
   */
  readonly lateMs: number | undefined
  /** How long the oldest waiting event has waited since it was enqueued, in ms; `undefined` with none waiting. */
  readonly oldestWaitingMs: number | undefined
  /** Each URL that holds events back now, with how many, across every worker. */
  readonly urls: readonly HeldUrl[]
}

/** The events a {@link WebhookQueue} emits. */
export interface WebhookQueueEvents {
  /** A Redis or BullMQ error, e.g. a refused connection (it keeps reconnecting); written to the console when nobody listens. */
  error: [error: Error]
  /** Under `durability: 'best-effort'`, once: what a Redis restart or crash would lose; written to the console when nobody listens. */
  warning: [message: string]
}

/** What `enqueue()` did with an event. */
export interface EnqueueResult {
  readonly eventId: string
  /**
   * - `queued`: stored in Redis (acknowledged); a worker delivers it.
   * - `skipped`: its `integrations` turn the destination off; not stored.
   * - `duplicate`: an event with this id is in Redis (waiting, retrying or being sent), or was
   *   delivered less than `dedupWindowMs` ago; nothing stored, nothing sent again.
   * - `dead-letter`: this id is a dead letter; nothing stored. `redrive(eventId)` sends the
   *   stored event again, once its receiver is fixed.
   * - `disabled`: its destination is disabled; not stored.
   */
  readonly status: 'queued' | 'skipped' | 'duplicate' | 'dead-letter' | 'disabled'
}

/** Options of `enqueue()` and `enqueueBulk()`. */
export interface EnqueueOptions {
  /**
   * The id of the registry's destination the event goes to (see {@link WebhookQueue.destinations}):
   * its URLs, headers, secrets and mode. Without it, the event goes to the workers' own `webhooks`.
   * An id the registry does not hold is refused (`UnknownDestinationError`); a disabled one
   * answers `'disabled'` and nothing is stored.
   */
  destination?: string | undefined
}

/** An event that failed for good or ran out of its retry window, kept for the operator. */
export interface DeadLetter {
  readonly eventId: string
  /** The registry's destination it was for; none for the workers' own `webhooks`. */
  readonly destination?: string
  /** Epoch ms when it failed. */
  readonly failedAt: number | undefined
  /** Why, in one line. */
  readonly reason: string
  /** Each URL's last state, including its last error code and status. */
  readonly urls: readonly StoredTarget[]
  /**
   * What is wrong with the job's data in Redis, for a job eventwire cannot read (written or
   * changed by something else): it failed without being sent and cannot be re-driven.
   */
  readonly unreadable?: string
}

export { DEFAULT_QUEUE_NAME } from './options.js'

/** An event ready to be stored, with whether its `integrations` let it through and whether the caller gave its `messageId`. */
interface CheckedEvent extends EventToStore {
  readonly enabled: boolean
  readonly named: boolean
}

/**
 * The producer side of durable delivery: validates each event, serializes its payload once and
 * stores it in Redis through BullMQ, from any process. Workers ({@link WebhookWorker}) deliver
 * it. Also the operator's handle on the dead-letter list.
 *
 * @example
 * ```ts
 * import { WebhookQueue } from 'eventwire/webhook/bullmq'
 *
 * const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: 6379 } })
 * await queue.enqueue({ type: 'track', userId: 'u1', event: 'Paid' })
 * for (const letter of await queue.deadLetters()) await queue.redrive(letter.eventId)
 * ```
 */
export class WebhookQueue<Plan extends TrackingPlan | NoPlan = NoPlan> extends Emitter<WebhookQueueEvents> {
  readonly #queue: StoredJobQueue<WebhookJobData>
  /** What the workers hold back, by reason and URL (written by them, read by `counts()`). */
  readonly #held: HeldJobs
  /** The queue's keys, `<prefix>:<name>`: where the registry and the attempt log are. */
  readonly #keys: string
  /** Redis's persistence, checked at start and on every reconnect. */
  readonly #durability: DurabilityWatch
  readonly #timeoutMs: number
  /** How each job is kept where it differs from the workers' defaults: the retention of dead letters, the `dedupWindowMs`. */
  readonly #storing: StoreOptions
  /** How long Redis remembers an id once its event is delivered (ms). */
  readonly #dedupWindowMs: number
  /** Stores the events of the calls of one turn together, in as few transactions as it can. */
  readonly #batcher = new StoreBatcher((events) => storeOnce(this.#queue, events, this.#storing))
  /** The tracking plan every enqueued event must follow, if one was given. */
  readonly #plan: SchemaPlan | undefined
  /** With `waitForReplicas`: what confirms each write with replicas. */
  readonly #replicas: ReplicaAck | undefined
  #checked: Promise<void> | undefined
  #closing: Promise<void> | undefined
  #lastError: Error | undefined
  /** Whether each destination enqueued to takes events, as of at most a second ago. */
  readonly #routes: DestinationCache<DestinationRoute>
  /**
   * The registry of destinations, in this queue's Redis: add, change, disable and delete the
   * destinations events are enqueued to (`enqueue(event, { destination })`). See
   * {@link WebhookDestinations}.
   */
  readonly destinations: WebhookDestinations
  /**
   * The registry of sources, in this queue's Redis: whose write keys `eventwire serve` takes, and
   * the destinations each source's events go to. See {@link WebhookSources}.
   */
  readonly sources: WebhookSources

  /**
   * @param options - Where the queue lives; with `plan` (a `definePlan`), each event is checked by
   * it before it is stored (the schema's output is stored) and `enqueue` is typed by it.
   * @throws `OptionsError` naming the first option it cannot use.
   */
  constructor(options: WebhookQueueOptions & WebhookPlanOption<Plan>) {
    super()
    const { plan, rest } = takePlan(options)
    this.#plan = plan
    const resolved = resolveQueueOptions(rest)
    this.#durability = new DurabilityWatch(resolved.durability, 'WebhookQueue', resolved.prefix, {
      warn: (message) => {
        if (!this.emit('warning', message)) console.warn(message)
      },
      // Until a reconnect finds Redis fit again, enqueue() rejects with this refusal.
      refused: (refusal) => {
        if (!this.emit('error', refusal)) console.error('eventwire: webhook queue:', refusal.message)
      },
      accepted: () => undefined,
    })
    this.#timeoutMs = resolved.enqueueTimeout
    const { deadLetters, dedupWindowMs } = resolved
    this.#dedupWindowMs = dedupWindowMs
    // Workers apply the defaults: a job carries its own only when they differ (Redis bytes per job).
    this.#storing = {
      removeOnFail:
        deadLetters.maxAgeMs === DEAD_LETTER_DEFAULTS.maxAgeMs && deadLetters.maxCount === DEAD_LETTER_DEFAULTS.maxCount
          ? undefined
          : keepDeadLetters(deadLetters),
      dedupWindowMs: dedupWindowMs === DEFAULT_DEDUP_WINDOW_MS ? undefined : dedupWindowMs,
    }
    this.#replicas = resolved.waitForReplicas && new ReplicaAck(resolved.waitForReplicas, resolved.prefix)
    this.#queue = new StoredJobQueue<WebhookJobData>(resolved.name, {
      connection: resolved.connection,
      prefix: resolved.prefix,
    })
    this.#keys = `${resolved.prefix}:${resolved.name}`
    this.#held = new HeldJobs(this.#keys)
    const registry = new Registry(this.#keys)
    const store = async () => (await this.#queue.backend.client) as unknown as RegistryStore
    this.#routes = new DestinationCache({
      registry,
      store,
      build: (read) =>
        read.kind === 'found'
          ? { kind: read.resolved.enabled ? 'enabled' : 'disabled', standard: read.resolved.standardKeys.length > 0 }
          : read,
      failed: (error) => {
        if (!this.emit('error', error)) console.error('eventwire: webhook queue:', error.message)
      },
    })
    this.destinations = new WebhookDestinations(registry, store, (id) => this.#routes.forget(id), this.#keys)
    this.sources = new WebhookSources({
      keys: this.#keys,
      store,
      bounded: (work) => this.#bounded(work, 'Could not read the registry of sources', () => 'then send again'),
      failed: (error) => {
        if (!this.emit('error', error)) console.error('eventwire: webhook queue:', error.message)
      },
      unreadable: (id, problem) => {
        const message = `eventwire: source ${JSON.stringify(id)} in Redis cannot be read, and its write keys are refused: ${problem}. Set it again (sources.set(), or eventwire sources set).`
        if (!this.emit('warning', message)) console.warn(message)
      },
    })
    this.#queue.on('error', (error: Error) => {
      this.#lastError = error
      if (!this.emit('error', error)) console.error('eventwire: webhook queue:', error.message)
    })
  }

  /**
   * Resolves once Redis is connected and its persistence fits `durability`; `enqueue()` waits for
   * the same, so calling this is optional: it reports a misconfigured Redis at start.
   *
   * @throws `OptionsError` (as a rejection) on `durability` when Redis would lose acknowledged
   *   events under `strict`; `RedisTimeoutError` when Redis did not answer within `enqueueTimeout`;
   *   `RedisRefusedError` when it answered with an error reply (such as `LOADING`).
   */
  async ready(): Promise<void> {
    await this.#bounded(this.#check(), 'Could not reach Redis')
  }

  /**
   * Checks Redis's persistence once per queue, then again on each reconnect (durability-watch.ts);
   * a failed first check (Redis down, refused) is tried again on the next call.
   */
  async #check(): Promise<void> {
    this.#checked ??= (async () => {
      await this.#queue.waitUntilReady()
      await this.#durability.start(await this.#queue.backend.client)
    })().catch((error: unknown) => {
      this.#checked = undefined
      throw error
    })
    await this.#checked
    await this.#durability.verdict()
  }

  /**
   * `work`, or a `RedisRefusedError` as soon as Redis answers it with an error reply, or a
   * `RedisTimeoutError` once `enqueueTimeout` has passed; `advice` says what to do then, given
   * whether Redis refused (it answered) or did not answer in time.
   */
  async #bounded<T>(
    work: Promise<T>,
    what: string,
    advice: (refused: boolean) => string = () => 'then try again',
  ): Promise<T> {
    // Redis may still answer after the deadline; nobody waits for that outcome any more.
    work.catch(() => undefined)
    let failure: Error | undefined
    try {
      if (await settlesWithin(work, this.#timeoutMs)) return await work
    } catch (error) {
      // Our own refusals (durability) stand.
      if (error instanceof EventwireError || !(error instanceof Error)) throw error
      // Redis answered, with an error reply (OOM, READONLY, CLUSTERDOWN...): it is up, and refuses.
      const reply = redisReplyOf(error)
      if (reply !== undefined) throw refusedBy(reply, what, advice(true))
      // A connection that failed before the deadline is the same news as one that never
      // answered, and gets the same typed error.
      failure = error
    }
    const cause = failure ?? this.#lastError
    const last = cause === undefined ? 'no error reported yet' : `last error: ${cause.message}`
    throw new RedisTimeoutError(
      `${what} within ${this.#timeoutMs} ms (${last}). Check that Redis is up and reachable, ${advice(false)}; raise enqueueTimeout to wait longer.`,
      this.#timeoutMs,
      cause,
    )
  }

  /**
   * Stores an event for delivery. Resolves once Redis has it, with what Redis already had of its
   * id: an id in Redis, or enqueued within `dedupWindowMs`, is stored once (see
   * {@link EnqueueResult}).
   *
   * @throws `ValidationError` (as a rejection) for an event that cannot become a payload, by the
   *   same rules as `WebhookDestination.deliver()`, even when its `integrations` would skip it;
   *   `OptionsError` on `durability` when Redis would lose it (see {@link WebhookQueue.ready});
   *   `ClosedError` (`ERR_CLOSED`) at once after `close()`;
   *   `RedisTimeoutError` when Redis did not store it within `enqueueTimeout`. Redis may still
   *   store it later, when it comes back: enqueueing it again with the same `messageId` is safe;
   *   with `waitForReplicas`, `ReplicaAckError` when fewer replicas confirmed it (the same advice);
   *   `RedisRefusedError` (`ERR_REDIS_REFUSED`) as soon as Redis refuses it with an error reply:
   *   `OOM` (full, under `noeviction`), `READONLY`, `LOADING`, `CLUSTERDOWN`; the message says what to do.
   * @example
   * ```ts
   * import { WebhookQueue } from 'eventwire/webhook/bullmq'
   *
   * const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: 6379 } })
   * const { eventId, status } = await queue.enqueue({ type: 'track', messageId: 'order-1042', userId: 'u1', event: 'Paid' })
   * console.log(eventId, status) // 'order-1042' 'queued': Redis has it; a worker delivers it
   * ```
   */
  async enqueue<Data extends object = JsonObject>(
    event: WebhookEventInput<Plan, Data>,
    options: EnqueueOptions = {},
  ): Promise<EnqueueResult> {
    const destination = destinationOption(options)
    const checked = this.#checkEvent(event, 'enqueue()', destination)
    if (!checked.enabled) return { eventId: checked.eventId, status: 'skipped' }
    if (destination !== undefined) {
      const route = await this.#route(destination)
      if (!route.takes) return { eventId: checked.eventId, status: 'disabled' }
      // Refused now, not dead-lettered by a worker later: the caller can still give another id.
      if (route.standard) refuseDottedId(checked.eventId, 'enqueue()')
    }
    const [status] = await this.#store([checked], `Could not store event ${JSON.stringify(checked.eventId)} in Redis`)
    return { eventId: checked.eventId, status: status as EnqueueResult['status'] }
  }

  /**
   * Stores many events in one round trip to Redis, each as `enqueue()` would, and resolves with
   * one result per event, in their order. Every event is checked before any is stored: one that
   * breaks a rule rejects the call and nothing is stored. Each 1,000 events are one transaction,
   * stored whole or not at all; a call that rejects after checking may have stored some of its
   * transactions: enqueue the events again, and those stored answer `'duplicate'`. An id given
   * twice in `events` is stored once: the later ones answer `'duplicate'`.
   *
   * @throws `BulkValidationError` (as a rejection; a `ValidationError` whose `index` is the
   *   event's position) for the first event that cannot become a payload; `OptionsError`,
   *   `RedisTimeoutError` and `RedisRefusedError` as `enqueue()` does.
   * @example
   * ```ts
   * import { WebhookQueue } from 'eventwire/webhook/bullmq'
   *
   * const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: 6379 } })
   * const results = await queue.enqueueBulk([
   *   { type: 'track', messageId: 'order-1042', userId: 'u1', event: 'Paid' },
   *   { type: 'track', messageId: 'order-1043', userId: 'u2', event: 'Paid' },
   * ])
   * console.log(results.map((result) => result.status)) // ['queued', 'queued']
   * ```
   */
  async enqueueBulk<Data extends object = JsonObject>(
    events: readonly WebhookEventInput<Plan, Data>[],
    options: EnqueueOptions = {},
  ): Promise<EnqueueResult[]> {
    if (!Array.isArray(events))
      throw new ValidationError('ERR_INVALID_FIELD', 'events', 'enqueueBulk() takes an array of events.')
    const destination = destinationOption(options)
    const checked = events.map((event, index) => {
      try {
        return this.#checkEvent(event, 'enqueueBulk()', destination)
      } catch (error) {
        if (error instanceof ValidationError) throw new BulkValidationError(index, error)
        throw error
      }
    })
    if (destination !== undefined) {
      const route = await this.#route(destination)
      if (!route.takes)
        return checked.map(({ eventId, enabled }) => ({ eventId, status: enabled ? 'disabled' : 'skipped' }))
      if (route.standard)
        for (const [index, { eventId, enabled }] of checked.entries()) {
          try {
            if (enabled) refuseDottedId(eventId, 'enqueueBulk()')
          } catch (error) {
            throw new BulkValidationError(index, error as ValidationError)
          }
        }
    }
    const enabled = checked.filter((event) => event.enabled)
    const statuses =
      enabled.length === 0 ? [] : await this.#store(enabled, `Could not store ${enabled.length} events in Redis`)
    let next = 0
    return checked.map(({ eventId, enabled }) => ({
      eventId,
      status: enabled ? (statuses[next++] as EnqueueResult['status']) : 'skipped',
    }))
  }

  /** An event checked (against the plan, if any) and serialized: what is stored, whether it is stored at all, and whether the caller named it. */
  #checkEvent(event: unknown, caller: string, destination: string | undefined): CheckedEvent {
    const { eventId, body, enabled } = checkEvent(
      this.#plan === undefined ? event : followPlan(this.#plan, event, caller),
    )
    const messageId = (event as { messageId?: unknown }).messageId
    return { eventId, body, destination, enabled, named: typeof messageId === 'string' && messageId !== '' }
  }

  /**
   * Whether `destination` takes events now (as of at most a second ago; `takes` is `false` when
   * disabled), and whether it signs with Standard Webhooks.
   *
   * @throws {@link UnknownDestinationError} when the registry does not hold it, or cannot read it.
   */
  async #route(destination: string): Promise<{ takes: boolean; standard: boolean }> {
    if (this.#closing !== undefined) throw new ClosedError('enqueue events')
    const route = await this.#bounded(
      this.#routes.get(destination),
      'Could not read the registry of destinations',
      () => 'then enqueue it again',
    )
    if (route.kind === 'enabled' || route.kind === 'disabled')
      return { takes: route.kind === 'enabled', standard: route.standard }
    throw new UnknownDestinationError(destination, route.kind === 'unreadable' ? route.problem : undefined)
  }

  /** Stores checked events once each, within `enqueueTimeout`; `what` opens the timeout's message. */
  async #store(events: readonly CheckedEvent[], what: string): Promise<EnqueueResult['status'][]> {
    // At once: its connection is gone, and waiting for enqueueTimeout would blame Redis.
    if (this.#closing !== undefined) throw new ClosedError('enqueue events')
    const store = async () => {
      await this.#check()
      return this.#replicated(events, () => this.#batcher.store(events))
    }
    return this.#bounded(store(), what, (refused) => this.#retryAdvice(events, refused))
  }

  /**
   * What to do after a timeout or a refusal. After a timeout Redis may still store the events
   * once it answers; after a refusal it may have stored some of them (a call of many transactions,
   * a transaction Redis ran in part). A retry is only safe when it names the same events, and stays
   * safe after delivery only within the de-duplication window.
   */
  #retryAdvice(events: readonly CheckedEvent[], refused: boolean): string {
    const one = events.length === 1
    if (!events.every((event) => event.named)) {
      if (refused)
        return 'and give events a messageId before enqueueing them again: without a messageId, a second enqueue of an event Redis did store is a second event'
      return one
        ? 'and give events a messageId before enqueueing them again: this one may still be stored when Redis answers, and without a messageId a second enqueue is a second event'
        : 'and give events a messageId before enqueueing them again: these may still be stored when Redis answers, and without a messageId a second enqueue is a second event'
    }
    const again = one
      ? 'then enqueue it again with the same messageId'
      : 'then enqueue them again with the same messageIds'
    return this.#dedupWindowMs > 0
      ? `${again}: an id is stored once, and answers 'duplicate' when the first try reached Redis`
      : `${again}: an id is stored once while its event is in Redis, but with dedupWindowMs 0 one already delivered is sent again`
  }

  /** Runs a write; with `waitForReplicas`, resolves once enough replicas have it (see replica-ack.ts). */
  async #replicated<Result>(events: readonly CheckedEvent[], write: () => Promise<Result>): Promise<Result> {
    if (this.#replicas === undefined) return write()
    const ids = events.map((event) => event.eventId)
    return this.#replicas.confirm(
      await this.#queue.backend.client,
      write,
      ids,
      events.every((event) => event.named),
    )
  }

  /**
   * Dead letters, most recently failed first (BullMQ's order): events that failed for good or ran
   * out of their retry window. `start` and `end` are positions in that list, both included (the
   * first 100 by default).
   *
   * @example
   * ```ts
   * import { WebhookQueue } from 'eventwire/webhook/bullmq'
   *
   * const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: 6379 } })
   * for (const letter of await queue.deadLetters()) {
   *   console.log(letter.eventId, letter.reason, letter.urls.map((url) => url.lastStatus))
   * }
   * ```
   */
  async deadLetters(start = 0, end = 99): Promise<DeadLetter[]> {
    const jobs = await this.#queue.getFailed(start, end)
    return jobs.map((job: Job<WebhookJobData>) => {
      const unreadable = unreadableReason(job)
      if (unreadable === undefined)
        return {
          eventId: job.data.eventId,
          ...destinationField(job.data.destination),
          failedAt: job.finishedOn,
          reason: job.failedReason,
          urls: job.data.state?.targets ?? [],
        }
      return {
        eventId: eventIdOfJob(job.id) ?? String(job.id),
        ...destinationField(destinationOfJob(job.id)),
        failedAt: job.finishedOn,
        reason: job.failedReason ?? unreadable,
        urls: [],
        unreadable,
      }
    })
  }

  /**
   * The attempt log: each request the workers made for a destination's events (or, without
   * `destination`, for events of their own `webhooks`), newest first: when it was sent, to which
   * URL, its status or error, and how long it took. Workers keep the newest 200 per destination
   * for 7 days by default (their `attemptLog` option), and write them within a tenth of a second.
   *
   * @throws `OptionsError` naming an option it cannot use.
   * @example
   * ```ts
   * import { WebhookQueue } from 'eventwire/webhook/bullmq'
   *
   * const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: 6379 } })
   * for (const attempt of await queue.attempts({ destination: 'acme', limit: 20 })) {
   *   console.log(new Date(attempt.at).toISOString(), attempt.url, attempt.status ?? attempt.code, attempt.durationMs)
   * }
   * ```
   */
  async attempts(options: AttemptsOptions = {}): Promise<LoggedAttempt[]> {
    const range = resolveAttemptsOptions(options)
    const store = (await this.#queue.backend.client) as unknown as AttemptReadStore
    return readAttempts(store, this.#keys, range)
  }

  /**
   * Sends a dead letter again, with a fresh retry window and the same body and id. A dead letter
   * of a registry's destination is named with its `destination`, as it was enqueued. A URL that
   * took the event (mode `'each'`, where another URL failed) is not sent it again.
   *
   * @returns whether there was such a dead letter.
   * @throws `ValidationError` (as a rejection, `ERR_INVALID_FIELD` on `data`) for a dead letter
   *   whose data eventwire cannot read: it would fail again.
   * @example
   * ```ts
   * import { WebhookQueue } from 'eventwire/webhook/bullmq'
   *
   * const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: 6379 } })
   * // Once the receiver is fixed, send every dead letter again.
   * for (const letter of await queue.deadLetters()) await queue.redrive(letter.eventId)
   * ```
   */
  async redrive(eventId: string, options: EnqueueOptions = {}): Promise<boolean> {
    const job = await this.#queue.getJob(jobIdOf(eventId, destinationOption(options)))
    if (!job || !(await job.isFailed())) return false
    const unreadable = unreadableReason(job)
    if (unreadable !== undefined) {
      throw new ValidationError(
        'ERR_INVALID_FIELD',
        'data',
        `Dead letter ${JSON.stringify(eventId)} cannot be re-driven: ${unreadable}. Remove its job ${JSON.stringify(job.id)} from Redis (BullMQ's Queue.remove) and enqueue the event again.`,
      )
    }
    // Of its state, only the URLs that took it stay (mode 'each'): they are not sent it again. The
    // rest start afresh, with a new window, even one still pending when its destination was disabled.
    const state = job.data.state
    const delivered = state === undefined ? [] : state.targets.filter((target) => target.status === 'delivered')
    await job.updateData({
      ...freshData(job.data),
      ...(state === undefined || delivered.length === 0 ? {} : { state: { ...state, targets: delivered } }),
    })
    await job.retry('failed')
    return true
  }

  /**
   * Sends again what a destination was delivered in a time window: each event its workers kept
   * (the worker option `keepSent`), with its id and body, signed anew. An event of the window
   * whose id is in Redis (waiting, being delivered, or a dead letter) is not stored a second time.
   * Events are stored as `enqueueBulk()` stores them, a thousand at a time, and delivered as any
   * event, behind the destination's other events (fair queueing).
   *
   * @returns how many events the window held, and what became of them.
   * @throws `OptionsError` naming an option it cannot use; {@link UnknownDestinationError} for a
   *   destination the registry does not hold; `RedisTimeoutError` and `RedisRefusedError` as
   *   `enqueue()` does (replaying the window again is safe: what was stored answers `inFlight`).
   * @example
   * ```ts
   * import { WebhookQueue } from 'eventwire/webhook/bullmq'
   *
   * const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: 6379 } })
   * // The customer lost what they received between 14:00 and 15:00 UTC.
   * const { found, queued } = await queue.replay({
   *   destination: 'acme',
   *   since: Date.parse('2026-11-28T14:00:00Z'),
   *   until: Date.parse('2026-11-28T15:00:00Z'),
   * })
   * console.log(`${queued} of ${found} events sent again`)
   * ```
   */
  async replay(options: ReplayOptions): Promise<ReplayResult> {
    const range = resolveReplayOptions(options)
    if (this.#closing !== undefined) throw new ClosedError('replay events')
    const disabled = range.destination !== undefined && !(await this.#route(range.destination)).takes
    const client = (await this.#queue.backend.client) as unknown as SentReadStore
    const store: SentReadStore = {
      xrange: (...args) => this.#bounded(client.xrange(...args), 'Could not read the events kept for replay'),
    }
    const outcome = { queued: 0, inFlight: 0, deadLetters: 0, disabled: 0 }
    const found = await eachSent(store, this.#keys, range, async (events) => {
      if (disabled) {
        outcome.disabled += events.length
        return
      }
      const checked = events.map(({ eventId, body }) => ({
        eventId,
        body,
        destination: range.destination,
        enabled: true,
        named: true,
        replay: true,
      }))
      for (const status of await this.#store(checked, `Could not store ${checked.length} replayed events in Redis`)) {
        if (status === 'queued') outcome.queued++
        else if (status === 'dead-letter') outcome.deadLetters++
        else outcome.inFlight++
      }
    })
    return { found, ...outcome }
  }

  /**
   * How many events wait for a worker, wait for a retry, are held back by a URL (its breaker open,
   * its slots taken), are being delivered, or are dead letters; how late the work is; and which
   * URLs hold events back: the backlog an operator watches, across every worker.
   *
   * @example
   * ```ts
   * import { WebhookQueue } from 'eventwire/webhook/bullmq'
   *
   * const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: 6379 } })
   * const { waiting, retrying, heldByBreaker, lateMs, urls } = await queue.counts()
   * console.log({ waiting, retrying, heldByBreaker, lateMs })
   * for (const { url, heldByBreaker: held } of urls) if (held > 0) console.log(`${url}: ${held} held by its breaker`)
   * ```
   */
  async counts(): Promise<QueueCounts> {
    const store = (await this.#queue.backend.client) as unknown as HeldStore
    const keys = this.#queue.keys
    // The held jobs' read also reads the next waiting job: its enqueue time is the oldest waiting one's.
    const [counts, held, parked] = await Promise.all([
      this.#queue.getJobCounts('waiting', 'delayed', 'active', 'failed'),
      this.#held.read(store, {
        wait: keys.wait as string,
        delayed: keys.delayed as string,
        job: this.#queue.toKey(''),
      }),
      parkedCount(store as unknown as ParkedStore, this.#keys),
    ])
    const delayed = counts['delayed'] ?? 0
    // Counted apart, a moment apart: a job can move between the two readings.
    const heldByBreaker = Math.min(held.heldByBreaker, delayed)
    const heldForSlots = Math.min(held.heldForSlots, delayed - heldByBreaker)
    return {
      waiting: (counts['waiting'] ?? 0) + parked,
      parked,
      delayed,
      retrying: delayed - heldByBreaker - heldForSlots,
      heldByBreaker,
      heldForSlots,
      active: counts['active'] ?? 0,
      failed: counts['failed'] ?? 0,
      lateMs: held.lateMs,
      oldestWaitingMs:
        held.oldestEnqueuedAt === undefined ? undefined : Math.max(0, Date.now() - held.oldestEnqueuedAt),
      urls: held.urls,
    }
  }

  /**
   * Removes dead letters that failed more than `olderThanMs` ago (all of them by default) and
   * resolves with how many. For what `deadLetters` retention does not reach: jobs enqueued before
   * it, or a backlog of failures to clear after a fix.
   */
  async purgeDeadLetters(olderThanMs = 0): Promise<number> {
    return (await this.#queue.clean(olderThanMs, 0, 'failed')).length
  }

  /**
   * Closes the Redis connection. While Redis is down a graceful close cannot finish, so after
   * `enqueueTimeout` the connection is dropped instead. Safe to call more than once.
   */
  close(): Promise<void> {
    this.#durability.stop()
    this.#routes.close()
    this.sources.close()
    this.#closing ??= closeWithin(this.#queue, this.#timeoutMs)
    return this.#closing
  }
}

/** What a producer needs of a destination: whether it takes events, or why it cannot be used. */
type DestinationRoute =
  | { readonly kind: 'enabled' | 'disabled'; readonly standard: boolean }
  | { readonly kind: 'absent' }
  | { readonly kind: 'unreadable'; readonly problem: string }

/** The `destination` option, checked. @throws `OptionsError` for an id no destination can have. */
function destinationOption(options: EnqueueOptions): string | undefined {
  if (typeof options !== 'object' || options === null) throw new OptionsError('options', 'expected { destination? }.')
  // A misspelt option would otherwise enqueue the event to no destination at all.
  checkOptionNames(
    options as Record<string, unknown>,
    { destination: true },
    { dest: 'destination', destinationId: 'destination', to: 'destination' },
  )
  const { destination } = options
  if (destination !== undefined) checkDestinationId(destination)
  return destination
}

/** A dead letter's `destination`, present only when it has one. */
function destinationField(destination: string | undefined): { destination?: string } {
  return destination === undefined ? {} : { destination }
}
