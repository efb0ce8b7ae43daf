import { Emitter } from '../core/emitter.js'
import { ClosedError } from '../core/errors/closed-error.js'
import { MessageTooLargeError } from '../core/errors/message-too-large-error.js'
import { timeoutOption } from '../core/option-checks.js'
import { ValidationError } from '../core/errors/validation-error.js'
import type { AliasMessage, JsonObject, MessageType, PageMessage, ScreenMessage } from '../core/messages.js'
import { serializeCall } from '../core/check-message.js'
import type { GroupInput, IdentifyInput, NoPlan, TrackInput, TrackingPlan } from '../core/plan.js'
import type { PlanViolation } from '../core/plan-checker.js'
import type { SchemaIssue } from '../core/standard-schema.js'
import { setUnrefTimeout, settlesWithin } from '../core/timers.js'
import { describeError } from '../core/describe-error.js'
import {
  batchEnvelope,
  takeBatch,
  type Batch,
  type Envelope,
  type MessageCallback,
  type MessageOutcome,
  type QueuedMessage,
} from './batch.js'
import { deliveryError, type DeliveryError, type DeliveryErrorCode, type MessageRecord } from './delivery-error.js'
import {
  checkMiddleware,
  resolveClientOptions,
  type ClientOptions,
  type OptionsPlatform,
  type PlanOption,
  type ResolvedClientOptions,
} from './options.js'
import { Queue } from '../core/queue.js'
import { Holdings } from './holdings.js'
import { runMiddleware, type DroppedInfo, type Middleware } from './middleware.js'
import { NO_PAGE, pageLifecycle, type KeptMessage, type PageLifecycle } from './page-exit.js'
import { unsentStoreFor } from './page-store.js'
import { utf8ByteLength } from '../core/utf8.js'
import type { BatchBody, BatchTransport, SendResult, TransportFactory } from './transport.js'
import type { Gzip } from '../core/gzip.js'
import { batchBody, type Compression } from './batch-body.js'
import { RateLimitPause } from './retry-policy.js'
import { sendWithRetries } from './send-loop.js'
import type { WatchExit } from './process-exit.js'

/** What `'sent'` listeners receive: a batch the endpoint accepted. */
export interface SentInfo {
  /** The batch's own `messageId`. */
  readonly batchId: string
  readonly messages: readonly MessageRecord[]
  /** UTF-8 bytes of the batch's JSON: the request body, or what it inflates to when gzipped. */
  readonly bytes: number
  readonly status: number
  readonly attempts: number
}

/** What `'retry'` listeners receive: a batch about to be sent again. */
export interface RetryInfo {
  readonly batchId: string
  readonly messages: readonly MessageRecord[]
  /** 1 for the first retry. */
  readonly attempt: number
  /**
   * Why the previous attempt failed: an `HTTPError` for a status (its `response.status`), a
   * `TimeoutError`, or the network error (on Node `connect ECONNREFUSED ...` and the like; over
   * `fetch`, `TypeError: fetch failed` with the reason as `cause`).
   */
  readonly error: unknown
}

/** The events a {@link Client} emits. */
export interface ClientEvents {
  /** A batch was accepted by the endpoint (2xx). */
  sent: [info: SentInfo]
  /** Accepted messages will not be delivered; `error.messages` lists them. */
  error: [error: DeliveryError]
  /** A batch failed with a retryable error and will be sent again. */
  retry: [info: RetryInfo]
  /** After a call returned `false`: the queue fell back to half the high-water mark (and a quarter of `maxQueueSize`). */
  drain: []
  /** A middleware dropped a call: nothing was queued (its callback hears `'dropped'` too). */
  dropped: [info: DroppedInfo]
  /** With a plan and `planCheck: 'report'`: a call broke the plan; it was sent as given. */
  violation: [violation: PlanViolationInfo]
}

/** What `'violation'` listeners receive: a call that broke the plan, and how. */
export interface PlanViolationInfo {
  readonly type: MessageType
  /** The offending field and the path in it, as the schema named it: `properties.total`, `traits.email`, `event`. */
  readonly field: string
  readonly issues: readonly SchemaIssue[]
  /** The call's message as given (each field as it was read once), before any middleware. */
  readonly message: unknown
}

/** Options of {@link Client.close}. */
export interface CloseOptions {
  /** Longest wait for the queue to drain, in ms; what is left then fails with `ERR_CLOSE_TIMEOUT`. @defaultValue 30_000 */
  timeout?: number | undefined
}

export const DEFAULT_CLOSE_TIMEOUT = 30_000

/** What a runtime's `platform/` module gives a client besides its transport and compressor. */
export interface ClientPlatform extends OptionsPlatform {
  /** Logs what the client still holds when the process ends (Node). */
  readonly watchExit?: WatchExit | undefined
}

/**
 * What {@link Client} does, with the transport it is given: `Client` gives it the runtime's
 * (`src/client/platform/`), tests give it each platform's in turn on Node.
 */
export class ClientBase<Plan extends TrackingPlan | NoPlan = NoPlan> extends Emitter<ClientEvents> {
  readonly #options: ResolvedClientOptions
  readonly #transport: BatchTransport
  readonly #queue = new Queue<QueuedMessage>()
  readonly #middleware: Middleware<unknown>[]
  /** Batches being sent or retried, each with the promise that settles with it. */
  readonly #inFlight = new Map<Batch, Promise<void>>()
  /** Fired by close() when its timeout passes: the only abort there is. */
  readonly #closeDeadline = new AbortController()
  /**
   * One per batch being sent, fired with the close deadline: each send listens to its own (a
   * listener per attempt, retry wait and compression), not all of them to one signal, which
   * Node would report as a leak past ten (`maxConcurrentRequests` may be 1,000).
   */
  readonly #sendStops = new Set<AbortController>()
  /** Messages and bytes held (queued, in flight and retrying) and the backpressure they cause. */
  readonly #holdings: Holdings
  #lastSeq = 0
  /** Messages up to this `seq` are sent without waiting for `flushAt`. */
  #flushMark = 0
  #timer: ReturnType<typeof setTimeout> | undefined
  /** Calls dropped at a full queue in this tick, reported together. */
  readonly #dropped: QueuedMessage[] = []
  #closed = false
  #closing: Promise<void> | undefined
  /** With `waitUntil`: the flush at the end of this tick, already handed to the platform. */
  #tickFlush: Promise<void> | undefined
  /** `flushAt: 1` turns batching off: one message per request, even with a backlog. */
  readonly #maxBatchCount: number
  /** What every batch body carries besides its messages: the library, and the write key when in the body. */
  readonly #envelope: Envelope
  /**
   * The page the client runs in (`page-exit.ts`): in a browser page with `flushOnPageHide`, every
   * batch goes with `keepalive` within the browser's budget; elsewhere one that does nothing.
   */
  readonly #page: PageLifecycle
  /** How bodies are compressed, when `compression` is `'gzip'` and the runtime can. */
  readonly #compression: Compression | undefined
  /** The pause a 429 puts on every request of this client. */
  readonly #pause = new RateLimitPause()

  /**
   * @param writeKey - The write key of your source.
   * @param createTransport - Makes what sends the batches: the runtime's (`platform/`), or a test's.
   * @param gzip - Compresses bodies: the runtime's (`platform/`), or a test's; none without `CompressionStream`.
   * @param platform - The rest of what the runtime's `platform/` module gives: the exit watch
   * (Node) and other clients' names for our options (server runtimes).
   * @throws {@link OptionsError} for a missing write key or an option it cannot use.
   */
  constructor(
    writeKey: string,
    options: ClientOptions & PlanOption<Plan>,
    createTransport: TransportFactory,
    gzip: Gzip | undefined,
    platform: ClientPlatform = {},
  ) {
    super()
    this.#options = resolveClientOptions(writeKey, options, platform)
    const deadline = this.#closeDeadline.signal
    deadline.addEventListener('abort', () => {
      for (const stop of this.#sendStops) stop.abort(deadline.reason)
    })
    this.#middleware = [...this.#options.middleware]
    this.#transport = createTransport(this.#options)
    const from = this.#options.compressFrom
    this.#compression = from === undefined || gzip === undefined ? undefined : { gzip, from }
    this.#debug(() => `sending to ${this.#options.batchUrl} with ${this.#transport.name}`)
    if (from !== undefined && gzip === undefined) this.#debug(() => 'no CompressionStream: batches go uncompressed')
    this.#holdings = new Holdings(this.#options)
    this.#maxBatchCount = this.#options.flushAt === 1 ? 1 : Number.POSITIVE_INFINITY
    this.#envelope = batchEnvelope(
      this.#options.writeKeyIn === 'body' ? writeKey : undefined,
      this.#options.defaultContext,
    )
    this.#page = this.#options.flushOnPageHide
      ? pageLifecycle(
          {
            sendQueued: () => this.#sendQueuedWithinKeepalive(),
            leave: () => this.#leavePage(),
            takeKept: () => this.#takeKept(),
          },
          () => (this.#options.storeOnPageHide ? unsentStoreFor(this.#options.batchUrl, writeKey) : undefined),
        )
      : NO_PAGE
    this.#takeKept()
    platform.watchExit?.(this, this.#options.logger)
  }

  /**
   * Says who the user is and records their traits.
   *
   * @returns `false` when the queue is over its high-water mark: wait for `'drain'` before sending more.
   * @throws {@link ValidationError} with no `userId` and no `anonymousId`; {@link MessageTooLargeError}; {@link ClosedError}.
   * @example
   * ```ts
   * import { Client } from 'eventwire'
   *
   * const client = new Client('WRITE_KEY', { endpoint: 'https://ingest.example.com' })
   * client.identify({ userId: 'u1', traits: { plan: 'pro', email: 'a@example.com' } })
   * ```
   */
  identify<Traits extends object = JsonObject>(
    message: IdentifyInput<Plan, Traits>,
    callback?: MessageCallback,
  ): boolean {
    return this.#enqueue('identify', message, callback)
  }

  /**
   * Records something the user did.
   *
   * @returns `false` when the queue is over its high-water mark: wait for `'drain'` before sending more.
   * @throws {@link ValidationError} without `event` or without `userId`/`anonymousId`; {@link MessageTooLargeError}; {@link ClosedError}.
   * @example
   * ```ts
   * import { Client } from 'eventwire'
   *
   * const client = new Client('WRITE_KEY', { endpoint: 'https://ingest.example.com' })
   * // The callback hears how this one message ended: `undefined` once sent, or the DeliveryError.
   * client.track({ userId: 'u1', event: 'Signed Up', properties: { source: 'ad' } }, (error) => {
   *   if (error) console.error(error.code, error.message)
   * })
   * ```
   */
  track<Properties extends object = JsonObject>(
    message: TrackInput<Plan, Properties>,
    callback?: MessageCallback,
  ): boolean {
    return this.#enqueue('track', message, callback)
  }

  /**
   * Records a web page view. Go's `Page.Traits` is sent as `properties`.
   *
   * @returns `false` when the queue is over its high-water mark.
   * @throws {@link ValidationError}; {@link MessageTooLargeError}; {@link ClosedError}.
   * @example
   * ```ts
   * import { Client } from 'eventwire'
   *
   * const client = new Client('WRITE_KEY', { endpoint: 'https://ingest.example.com' })
   * client.page({ userId: 'u1', name: 'Home', category: 'Docs', properties: { path: '/' } })
   * ```
   */
  page<Properties extends object = JsonObject>(message: PageMessage<Properties>, callback?: MessageCallback): boolean {
    return this.#enqueue('page', message, callback)
  }

  /**
   * Records a mobile screen view.
   *
   * @returns `false` when the queue is over its high-water mark.
   * @throws {@link ValidationError}; {@link MessageTooLargeError}; {@link ClosedError}.
   * @example
   * ```ts
   * import { Client } from 'eventwire'
   *
   * const client = new Client('WRITE_KEY', { endpoint: 'https://ingest.example.com' })
   * // A producer that respects backpressure: wait for room when a call says the queue is full.
   * for (const tab of ['usage', 'invoices', 'plans']) {
   *   if (!client.screen({ userId: 'u1', name: 'Dashboard', category: 'Billing', properties: { tab } })) {
   *     await client.whenDrained()
   *   }
   * }
   * ```
   */
  screen<Properties extends object = JsonObject>(
    message: ScreenMessage<Properties>,
    callback?: MessageCallback,
  ): boolean {
    return this.#enqueue('screen', message, callback)
  }

  /**
   * Ties the user to a group (company, organization, account, project or team).
   *
   * @returns `false` when the queue is over its high-water mark.
   * @throws {@link ValidationError} without `groupId` or without `userId`/`anonymousId`; {@link MessageTooLargeError}; {@link ClosedError}.
   * @example
   * ```ts
   * import { Client } from 'eventwire'
   *
   * const client = new Client('WRITE_KEY', { endpoint: 'https://ingest.example.com' })
   * client.group({ userId: 'u1', groupId: 'g1', traits: { size: 20 } })
   * ```
   */
  group<Traits extends object = JsonObject>(message: GroupInput<Plan, Traits>, callback?: MessageCallback): boolean {
    return this.#enqueue('group', message, callback)
  }

  /**
   * Links a previous id (often an anonymous one) to the user's id.
   *
   * @returns `false` when the queue is over its high-water mark.
   * @throws {@link ValidationError} without `userId` or `previousId`; {@link MessageTooLargeError}; {@link ClosedError}.
   * @example
   * ```ts
   * import { Client } from 'eventwire'
   *
   * const client = new Client('WRITE_KEY', { endpoint: 'https://ingest.example.com' })
   * // An alias sequence: calls under the anonymous id, then alias, identify, and calls under the new id.
   * client.track({ userId: 'anon-1', event: 'Plan Selected' })
   * client.alias({ previousId: 'anon-1', userId: 'u1' })
   * client.identify({ userId: 'u1', traits: { plan: 'pro' } })
   * client.track({ userId: 'u1', event: 'Signed Up' })
   * ```
   */
  alias(message: AliasMessage, callback?: MessageCallback): boolean {
    return this.#enqueue('alias', message, callback)
  }

  /** Messages accepted and not yet settled (queued, in flight or retrying). */
  get pending(): number {
    return this.#holdings.messages
  }

  /** Whether a call returned `false` and `'drain'` has not been emitted since. */
  get needDrain(): boolean {
    return this.#holdings.needDrain
  }

  /** Resolves at once when the queue has room, else on the next `'drain'`. */
  whenDrained(): Promise<void> {
    if (!this.#holdings.needDrain) return Promise.resolve()
    return new Promise((resolve) => this.once('drain', resolve))
  }

  /**
   * Sends everything queued now, without waiting for `flushAt` or `flushAfter`. Resolves when every
   * message enqueued before the call has been delivered or has definitively failed (reported
   * through `'error'`); never rejects. Overlapping calls share the same requests.
   *
   * @example
   * ```ts
   * import { Client } from 'eventwire'
   *
   * const client = new Client('WRITE_KEY', { endpoint: 'https://ingest.example.com' })
   * client.on('error', (error) => console.error(error.code, error.messages.length))
   * client.track({ userId: 'u1', event: 'Checkout Started' })
   * await client.flush() // delivered, or reported through 'error'
   * ```
   */
  async flush(): Promise<void> {
    const target = this.#lastSeq
    this.#flushMark = Math.max(this.#flushMark, target)
    this.#pump()
    while (this.#holdsUpTo(target)) {
      await Promise.all(this.#inFlight.values())
    }
  }

  /**
   * Flushes, then refuses new calls (they throw `ERR_CLOSED`). After `timeout` ms, in-flight requests
   * are aborted and what is left fails with `ERR_CLOSE_TIMEOUT`. Safe to call more than once: every
   * call returns the same promise.
   *
   * @throws {@link OptionsError} for a negative or non-numeric timeout.
   * @example
   * ```ts
   * import { Client } from 'eventwire'
   *
   * const client = new Client('WRITE_KEY', { endpoint: 'https://ingest.example.com' })
   * client.track({ userId: 'u1', event: 'Job Finished' })
   * await client.close({ timeout: 10_000 }) // before a short-lived process exits
   * ```
   */
  close(options: CloseOptions = {}): Promise<void> {
    const timeout = timeoutOption('timeout', options.timeout, DEFAULT_CLOSE_TIMEOUT)
    if (!this.#closing) {
      this.#closed = true
      this.#closing = this.#shutdown(timeout)
    }
    return this.#closing
  }

  protected override onListenerError(error: unknown): void {
    this.#options.logger.error(
      // The stack says where; anything else is worded by describeError, which cannot throw (a
      // callback may throw a null-prototype object, which String() refuses).
      `a listener threw: ${(error instanceof Error && error.stack) || describeError(error)}`,
    )
  }

  #enqueue(type: MessageType, input: unknown, callback: MessageCallback | undefined): boolean {
    if (this.#closed) throw new ClosedError(`${type}()`)
    if (callback !== undefined && typeof callback !== 'function') {
      throw new ValidationError('ERR_INVALID_FIELD', 'callback', `${type}(): the callback must be a function.`)
    }
    const plan = this.#options.plan
    // A violation is told once the call is queued: not for a call its own rules then refuse, and a
    // listener (that may close the client) cannot come between the check and the queue.
    let violation: PlanViolation | undefined
    const planned = plan
      ? plan(type, input, (found) => {
          violation = found
        })
      : input
    let { wire, json, bytes } = serializeCall(type, planned)
    if (this.#middleware.length > 0) {
      const shaped = runMiddleware(this.#middleware, type, json)
      // A middleware may have closed the client: nothing is accepted (nor dropped) after close() began.
      if (this.#closed) throw new ClosedError(`${type}()`)
      if ('droppedBy' in shaped) return this.#dropByMiddleware(type, wire.messageId, shaped.droppedBy, callback)
      // What a middleware changed passes the call's rules again: it cannot send what a call could
      // not. Not the plan: its schemas take what calls give and a middleware has their output (a
      // transform would apply twice); the types keep a middleware to the plan. Unchanged (the same
      // JSON), it is what was checked.
      if (shaped.json !== json) ({ wire, json, bytes } = serializeCall(type, shaped.message))
    }

    const options = this.#options
    const message: QueuedMessage = { type, messageId: wire.messageId, json, bytes, seq: this.#lastSeq + 1, callback }
    if (!this.#holdings.admit(bytes)) {
      this.#drop(message)
      return false
    }
    this.#lastSeq = message.seq
    this.#queue.push(message)
    if (options.waitUntil !== undefined) this.#flushAtEndOfTick(options.waitUntil)
    // A call as the page is being left (from a pagehide or visibilitychange listener): no timer of
    // the page may fire again, so it is sent or kept now.
    else if (this.#page.left) this.#leavePage()
    else if (this.#queue.length >= options.flushAt) this.#pump()
    else this.#armTimer()
    if (violation !== undefined) this.emit('violation', { type, ...violation, message: planned })
    return !this.#holdings.needDrain
  }

  /**
   * Adds a middleware at the end of the chain: it shapes the calls made from now on (see
   * {@link Middleware}). Returns the client, to chain.
   *
   * @throws {@link OptionsError} for something that is not a function.
   * @example
   * ```ts
   * import { Client } from 'eventwire'
   *
   * const client = new Client('WRITE_KEY').use((message) => ({
   *   ...message,
   *   context: { ...message.context, requestId: 'req-42' },
   * }))
   * ```
   */
  use(middleware: Middleware<Plan>): this {
    this.#middleware.push(checkMiddleware(middleware))
    return this
  }

  /** A call a middleware dropped: told to `'dropped'` listeners and to its callback, after the call returns. */
  #dropByMiddleware(type: MessageType, messageId: string, middleware: string, callback: MessageCallback | undefined) {
    queueMicrotask(() => {
      this.emit('dropped', { type, messageId, middleware })
      if (callback) this.#callBack(callback, undefined, 'dropped')
    })
    return !this.#holdings.needDrain
  }

  /**
   * Serverless: the platform may freeze the function once the response is out, so the calls of one
   * tick leave together at its end, and the flush is handed to `waitUntil` during the call itself,
   * while the invocation is surely alive.
   */
  #flushAtEndOfTick(waitUntil: (promise: Promise<unknown>) => void): void {
    if (this.#tickFlush !== undefined) return
    // Flushes in a microtask: after the rest of this tick's calls.
    this.#tickFlush = Promise.resolve().then(() => {
      this.#tickFlush = undefined
      return this.flush()
    })
    try {
      // A platform's waitUntil returns nothing; one that returns a promise must not reject unheard.
      const returned: unknown = waitUntil(this.#tickFlush)
      if (returned instanceof Promise) returned.catch((error: unknown) => this.onListenerError(error))
    } catch (error) {
      this.onListenerError(error)
    }
  }

  /**
   * Reports a call dropped at a full queue after the call returns, as every other outcome is.
   * Calls dropped in the same tick share one error: a producer hammering a full queue gets one
   * 'error' per tick, not one error (and one stack trace) per call.
   */
  #drop(message: QueuedMessage): void {
    if (this.#dropped.push(message) > 1) return
    queueMicrotask(() => {
      const dropped = this.#dropped.splice(0)
      this.#fail(dropped, 'ERR_QUEUE_FULL', undefined)
    })
  }

  /** Starts batches while request slots are free and the queue is due: at `flushAt`, or up to the flush mark. */
  #pump(): void {
    const options = this.#options
    while (this.#inFlight.size < options.maxConcurrentRequests && !this.#closeDeadline.signal.aborted) {
      const head = this.#queue.peek()
      if (head === undefined || (this.#queue.length < options.flushAt && head.seq > this.#flushMark)) break
      const batch = this.#takeBatch()
      if (batch === undefined) break
      this.#send(batch)
    }
    if (this.#queue.length === 0) this.#clearTimer()
    else this.#armTimer()
  }

  /**
   * The page is hidden (or being left) and may not come back: send what is queued now, as far as
   * the keepalive budget goes, past `flushAt`, `flushAfter` and `maxConcurrentRequests` alike.
   */
  #sendQueuedWithinKeepalive(): void {
    // What the budget cannot carry now leaves as soon as it can, not at flushAt or flushAfter.
    this.#flushMark = this.#lastSeq
    if (this.#closeDeadline.signal.aborted) return
    for (let batch = this.#takeBatch(); batch !== undefined; batch = this.#takeBatch()) this.#send(batch)
    if (this.#queue.length === 0) this.#clearTimer()
  }

  /**
   * The next batch from the head of the queue, or `undefined` when nothing is queued or, in a page,
   * the head does not fit in what the keepalive requests in flight leave (it waits for room).
   */
  #takeBatch(): Batch | undefined {
    if (this.#queue.length === 0) return undefined
    const batch = takeBatch(this.#queue, this.#envelope, { maxCount: this.#maxBatchCount, maxBytes: this.#page.room() })
    return batch.messages.length === 0 ? undefined : batch
  }

  /**
   * The page is being left: send what the keepalive budget can carry, and keep the rest in
   * `localStorage` for the next client of this endpoint and write key on this origin (see
   * {@link unsentStoreFor}). What can be neither sent nor kept fails with `ERR_PAGE_LEFT`: no
   * script of the page runs after this to send it.
   */
  #leavePage(): void {
    this.#sendQueuedWithinKeepalive()
    if (this.#queue.length === 0) return
    this.#keepForNextPage(this.#takeQueued(), undefined)
    this.#checkDrain()
  }

  /**
   * Keeps messages in `localStorage` for the next page, as far as the store goes; the rest fail
   * with `ERR_PAGE_LEFT`. Kept messages leave this client: the next page sends them and no callback
   * of theirs is called, unless this page comes back from the back-forward cache and sends them.
   */
  #keepForNextPage(messages: readonly QueuedMessage[], result: Extract<SendResult, { ok: false }> | undefined): void {
    const kept = this.#page.keep(messages)
    if (kept > 0) this.#debug(() => `page left: ${kept} message(s) kept for the next page`)
    const lost = messages.slice(kept)
    if (lost.length > 0) this.#fail(lost, 'ERR_PAGE_LEFT', result)
  }

  /** Takes every queued message out of the client (no longer held): for the caller to settle. */
  #takeQueued(): QueuedMessage[] {
    const taken = this.#queue.takeAll()
    this.#holdings.release(
      taken.length,
      taken.reduce((bytes, message) => bytes + message.bytes, 0),
    )
    return taken
  }

  /**
   * Queues what a page of this origin kept as it went away, to be sent at once, with the callbacks
   * of what this page kept itself (back from the back-forward cache). What the bounds cannot take
   * now (`maxQueueSize`, `maxQueueBytes`) goes back to the store.
   */
  #takeKept(): void {
    const records: KeptMessage[] = this.#page.take()
    let taken = 0
    for (const record of records) {
      const bytes = utf8ByteLength(record.json)
      if (!this.#holdings.admit(bytes)) break
      this.#queue.push({ ...record, bytes, seq: ++this.#lastSeq, callback: record.callback })
      taken++
    }
    if (taken < records.length) this.#page.keep(records.slice(taken))
    if (taken === 0) return
    this.#debug(() => `sending ${taken} message(s) kept by a page`)
    this.#flushMark = this.#lastSeq
    this.#pump()
  }

  #send(batch: Batch): void {
    const options = this.#options
    const page = this.#page
    // What the batch holds of the page's keepalive budget: its JSON, then what compression left.
    let held = batch.bytes
    const stop = new AbortController()
    this.#sendStops.add(stop)
    page.hold(held)
    const onRetry = (attempt: number, error: unknown) => {
      this.#debug(() => `retrying batch ${batch.id} (retry ${attempt}): ${describeError(error)}`)
      this.emit('retry', { batchId: batch.id, messages: batch.messages, attempt, error })
    }
    const waits = page.retryWaits()
    const sendBody = (body: BatchBody) => {
      this.#debug(
        () =>
          `sending batch ${batch.id}: ${batch.messages.length} message(s), ${batch.bytes} bytes${typeof body === 'string' ? '' : ` (${body.byteLength} gzipped)`}`,
      )
      return sendWithRetries(
        (signal) => this.#transport.attempt(body, { signal, keepalive: page.keepalive }),
        { signal: stop.signal, onRetry, waits },
        options.retry,
        this.#pause,
      )
    }
    const body = batchBody(batch, this.#compression, stop.signal, page, (error) => {
      this.#debug(() => `could not gzip batch ${batch.id} (${describeError(error)}): sent uncompressed`)
    })
    const sending =
      typeof body === 'string'
        ? sendBody(body)
        : body.then((ready) => {
            if (typeof ready !== 'string') {
              // Smaller in the budget: in a hidden page, more of the queue can go now (batches
              // waiting for a retry keep waiting: the page hiding woke them once already).
              const shrunk = held - ready.byteLength
              held = ready.byteLength
              if (page.release(shrunk)) this.#sendQueuedWithinKeepalive()
            }
            return sendBody(ready)
          })
    this.#inFlight.set(
      batch,
      sending.then((result) => {
        this.#sendStops.delete(stop)
        page.release(held)
        this.#settle(batch, result)
      }),
    )
  }

  #settle(batch: Batch, result: SendResult): void {
    this.#inFlight.delete(batch)
    this.#holdings.release(batch.messages.length, batch.messageBytes)
    if (result.ok) {
      this.#debug(() => `batch ${batch.id} delivered: HTTP ${result.status} after ${result.attempts} attempt(s)`)
      this.emit('sent', {
        batchId: batch.id,
        messages: batch.messages,
        bytes: batch.bytes,
        status: result.status,
        attempts: result.attempts,
      })
      for (const message of batch.messages) {
        if (message.callback) this.#callBack(message.callback, undefined, 'sent')
      }
    } else if (result.code === 'ERR_PAGE_LEFT') {
      this.#keepForNextPage(batch.messages, result)
    } else {
      this.#fail(batch.messages, result.code, result)
    }
    this.#checkDrain()
    this.#pump()
  }

  /**
   * Reports undelivered messages as one {@link DeliveryError} with `code` (`result` is the failed
   * send, none for the queue's own outcomes): `'error'` listeners and per-call callbacks, or the
   * logger when nobody listens.
   */
  #fail(
    messages: readonly QueuedMessage[],
    code: DeliveryErrorCode,
    result: Extract<SendResult, { ok: false }> | undefined,
  ): void {
    const error = deliveryError(code, messages, result, this.#options)
    const listened = this.emit('error', error)
    let everyMessageHasCallback = true
    for (const message of messages) {
      if (message.callback) this.#callBack(message.callback, error, 'failed')
      else everyMessageHasCallback = false
    }
    if (this.#options.verbose || (!listened && !everyMessageHasCallback)) {
      this.#options.logger.error(`${error.code}: ${error.message}`)
    }
  }

  /** Writes a debug line when `verbose` is on (or `DEBUG=analytics`); the line is made only then. */
  #debug(line: () => string): void {
    if (this.#options.verbose) this.#options.logger.log(line())
  }

  #callBack(callback: MessageCallback, error: DeliveryError | undefined, outcome: MessageOutcome): void {
    try {
      callback(error, outcome)
    } catch (thrown) {
      this.onListenerError(thrown)
    }
  }

  #checkDrain(): void {
    if (this.#holdings.drained()) this.emit('drain')
  }

  /** Whether a message with `seq <= target` is still queued or in flight. */
  #holdsUpTo(target: number): boolean {
    const head = this.#queue.peek()
    if (head !== undefined && head.seq <= target) return true
    for (const batch of this.#inFlight.keys()) {
      if ((batch.messages[0]?.seq ?? Number.POSITIVE_INFINITY) <= target) return true
    }
    return false
  }

  #armTimer(): void {
    if (this.#timer !== undefined || this.#closed) return
    this.#timer = setUnrefTimeout(() => {
      this.#timer = undefined
      this.#flushMark = this.#lastSeq
      this.#pump()
    }, this.#options.flushAfter)
  }

  #clearTimer(): void {
    if (this.#timer === undefined) return
    clearTimeout(this.#timer)
    this.#timer = undefined
  }

  async #shutdown(timeout: number): Promise<void> {
    this.#clearTimer()
    this.#page.stop()
    const flushed = this.flush()
    if (!(await settlesWithin(flushed, timeout))) {
      this.#closeDeadline.abort(new Error('close() timed out'))
      const left = this.#takeQueued()
      if (left.length > 0) {
        this.#fail(left, 'ERR_CLOSE_TIMEOUT', undefined)
        this.#checkDrain()
      }
    }
    await flushed
    // Nothing is sent after close(): the transport's idle connections can go.
    await this.#transport.close?.()
  }
}
