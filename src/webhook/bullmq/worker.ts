import { DelayedError, UnrecoverableError, WaitingError, type ConnectionOptions, type Job } from 'bullmq'
import { describeError } from '../../core/describe-error.js'
import { causeText } from '../delivery/failure.js'
import { timeoutOption } from '../../core/option-checks.js'
import { MAX_TIMER_MS, setUnrefTimeout, settlesWithin } from '../../core/timers.js'
import { closeWithin } from './close-within.js'
import { Emitter } from '../../core/emitter.js'
import { OptionsError } from '../../core/errors/options-error.js'
import { DeliveryRounds, type DeliveryEvents } from '../delivery/rounds.js'
import { createEngine, partsFor, type EngineParts } from '../delivery/engine-parts.js'
import { MAX_WEBHOOKS } from '../delivery/settings.js'
import { DestinationCache, type ReadDestination } from './destination-cache.js'
import { Registry, type RegistryStore } from './registry.js'
import { headerShapesOf, type Endpoint } from '../network/endpoint.js'
import { defaultPlatform } from '../platform/node.js'
import type { AttemptNotice, WebhookUrlResult } from '../delivery/result.js'
import { settingNamesWithout, type DestinationsSettings, type WebhookSettings } from '../delivery/settings.js'
import type { WebhookTransport } from '../network/transport.js'
import type { Durability } from './durability.js'
import { DurabilityWatch } from './durability-watch.js'
import { eventIdOfJob, freshData, keepDelivered, restoreState, storeState, type WebhookJobData } from './job-data.js'
import { DEAD_LETTER_DEFAULTS, DEFAULT_DEDUP_WINDOW_MS, keepDeadLetters, resolveWorkerOptions } from './options.js'
import { REMEMBER_IDS_LUA, shardHash } from './remembered-ids.js'
import { unreadableReason } from './stored-job.js'
import { FaultTolerantWorker } from './fault-tolerant-worker.js'
import { isOutOfMemory } from './redis-fault.js'
import { CLOCK_SKEW_WARNING_MS, CLOCK_SYNC_MS, RedisClock, skewWarning, type TimeSource } from './redis-clock.js'
import { RedisFaultError } from './redis-fault-error.js'
import { HeldJobs, type HeldStore } from './held-jobs.js'
import { SharedBreakers, type BreakerStore } from './shared-breakers.js'
import { SharedRates, type RateStore } from './shared-rates.js'
import { WorkerLanes, type WorkerUrlState } from './worker-lanes.js'
import { FairQueueing, partyOfJob, type FairStore } from './fair-queueing.js'
import { AttemptLog, type AttemptLogOptions } from './attempt-log.js'
import { SentBodies, type KeepSentOptions } from './sent-bodies.js'
import type { StreamStore } from './stream-writer.js'
import { DeliveryAlerts, type AlertOptions, type AlertStore, type DeliveryAlert } from './delivery-alerts.js'
import { WebhookDestinations } from './webhook-destinations.js'
import type { UrlStateNotice } from '../delivery/destination-base.js'

/** Where the worker takes jobs from, and how many at once. */
export interface WebhookWorkerOptions {
  /** ioredis options or instance; BullMQ workers need `maxRetriesPerRequest: null`. */
  connection: ConnectionOptions
  /** @defaultValue 'eventwire-webhooks' */
  name?: string | undefined
  /** @defaultValue 'bull' */
  prefix?: string | undefined
  /** Events delivered at once by this worker. @defaultValue 50 */
  concurrency?: number | undefined
  /** How long a worker holds a job before others may take it over (ms); a killed worker's jobs come back after it. @defaultValue 30_000 */
  lockDuration?: number | undefined
  /** How often stalled jobs are looked for (ms). @defaultValue 30_000 */
  stalledInterval?: number | undefined
  /**
   * What Redis must keep: `strict` refuses to start (no job is taken; `ready()` rejects and
   * `'error'` is emitted) unless Redis has its append-only file on; `best-effort` starts anyway
   * and emits `'warning'` once. See docs/durable-delivery.md. @defaultValue 'strict'
   */
  durability?: Durability | undefined
  /**
   * Each attempt (its time, URL, status or error, duration) is logged per destination in Redis,
   * read with `WebhookQueue.attempts()`; `false` for none. See docs/destinations.md.
   * @defaultValue { maxEntries: 200, maxAgeMs: 7 days }
   */
  attemptLog?: AttemptLogOptions | false | undefined
  /**
   * Keep each delivered event's id and body per destination in Redis, bounded by count and age,
   * so that `WebhookQueue.replay()` can send a time window again; `true` for the defaults. Bodies
   * cost Redis their size. See docs/destinations.md. @defaultValue false
   */
  keepSent?: KeepSentOptions | boolean | undefined
  /**
   * Staged alerts (`'alert'`) for a URL that keeps failing its events, and whether a destination
   * whose every URL gave up is disabled; `false` for none. See docs/destinations.md.
   * @defaultValue { shares: [0.25, 0.5, 0.75], autoDisable: false }
   */
  alerts?: AlertOptions | false | undefined
}

/**
 * The settings of a worker that serves the registry's destinations (docs/destinations.md): those
 * that apply to every destination. URLs, secrets and mode are each destination's own.
 */
export type DestinationsWorkerSettings = Omit<DestinationsSettings, 'maxPendingPerUrl'>

/** What `WebhookWorker.close()` takes. */
export interface WorkerCloseOptions {
  /** How long to wait for the jobs in progress and Redis (ms). @defaultValue the attempt timeout plus 5 s */
  timeout?: number | undefined
}

/** Time for Redis beyond an attempt's timeout before `close()` stops waiting. */
export const CLOSE_MARGIN_MS = 5_000
/** The first wait before a full Redis is probed again; it doubles up to {@link MAX_PROBE_MS}. */
const FIRST_PROBE_MS = 1_000
const MAX_PROBE_MS = 30_000

/**
 * `maxPendingPerUrl` bounds the in-memory engine's backlog; a worker's backlog is Redis's, read
 * with `WebhookQueue.counts()`. Refused rather than ignored without a word.
 */
function refuseMemorySettings(settings: WebhookSettings | DestinationsWorkerSettings): void {
  if (typeof settings !== 'object' || settings === null) return
  if ((settings as WebhookSettings).maxPendingPerUrl !== undefined) {
    throw new OptionsError(
      'maxPendingPerUrl',
      "applies to WebhookDestination only: a WebhookWorker's backlog waits in Redis (WebhookQueue.counts(), docs/durable-delivery.md). Leave it out here.",
    )
  }
}

/** The settings a worker takes: an unknown one is answered with these. */
const WORKER_SETTINGS = settingNamesWithout('maxPendingPerUrl')

/**
 * Slots per URL in one worker process: all of them with one URL; else the setting, or an equal
 * share of the worker's concurrency, so that URLs that never answer hold only their own shares.
 * A worker without URLs of its own serves the registry's destinations, each of up to
 * {@link MAX_WEBHOOKS} URLs: its share is that of a destination with them all.
 */
function slotsPerUrl(
  settings: WebhookSettings | DestinationsWorkerSettings,
  endpoints: number,
  concurrency: number,
): number {
  if (endpoints === 1) return concurrency
  return settings.maxConcurrencyPerUrl ?? Math.max(1, Math.ceil(concurrency / (endpoints || MAX_WEBHOOKS)))
}

/** What a worker delivers one destination's events with: its URLs, and the rounds over them. */
interface Serving {
  readonly endpoints: readonly Endpoint[]
  readonly rounds: DeliveryRounds
}

/** Why a job's destination cannot be served: its dead letter's reason. */
interface NotServed {
  readonly refused: string
}

/** The name the script that remembers delivered ids is defined under on BullMQ's connection. */
const REMEMBER = 'eventwireRememberIds'

/** The commands the worker sends itself after deliveries (see `WebhookWorker.#remember`), and its socket. */
interface MarkerStore {
  [REMEMBER](windows: string, seen: string, window: number, ...idsAndHashes: (string | number)[]): Promise<unknown>
  defineCommand(name: string, definition: { numberOfKeys: number; lua: string }): void
  /** A single Redis's socket; a cluster client has none. */
  readonly stream?: { cork(): void; uncork(): void } | undefined
}

/**
 * The events a {@link WebhookWorker} emits: those of every delivery engine, as the in-memory one
 * emits them, plus BullMQ and Redis errors. No `skipped`: `WebhookQueue.enqueue()` skips events
 * before they reach Redis.
 */
export interface WebhookWorkerEvents extends DeliveryEvents {
  /** A Redis or BullMQ error (the worker keeps reconnecting), or the `strict` durability refusal; written to the console when nobody listens. */
  error: [error: Error]
  /** Under `durability: 'best-effort'`, once: what a Redis restart or crash would lose; and when this worker's clock is more than 2 s from Redis's. Written to the console when nobody listens. */
  warning: [message: string]
  /** A URL's circuit breaker, in this worker process, opened, let a probe through, or closed. */
  'url-state': [notice: UrlStateNotice]
  /**
   * This worker's check found a job whose worker stopped renewing its lock (it died, hung, or lost
   * Redis), and put it back in the queue to be run again.
   */
  recovered: [notice: RecoveredJob]
  /**
   * This worker runs a job whose earlier run did not finish (its lock expired): the URLs that run
   * sent to may get the event again. Receivers de-duplicate on `Webhook-Id`.
   */
  repeated: [notice: RepeatedRun]
  /**
   * A URL keeps failing its events (at each share of the retry window), an event's window ran out
   * at it, it took an event again, or `autoDisable` disabled its destination: each told once,
   * by one worker of the fleet. See docs/destinations.md.
   */
  alert: [alert: DeliveryAlert]
}

/** A job put back in the queue after its worker stopped renewing its lock: see `'recovered'`. */
export interface RecoveredJob {
  readonly jobId: string
  /** The event's id; `undefined` for a job eventwire did not make. */
  readonly eventId: string | undefined
}

/** A run of a job whose earlier run did not finish: see `'repeated'`. */
export interface RepeatedRun {
  readonly jobId: string
  readonly eventId: string
  /** Runs of this job that did not finish, so far. */
  readonly stalls: number
}

/**
 * The delivery side of durable delivery: takes events from Redis (BullMQ) and delivers them with
 * the in-memory engine's rules (the same payload bytes, headers, signatures, failover, timeout,
 * retry window and breaker) in one or many processes. Each URL of an event keeps its own
 * timeline, and takes only its own slots of the worker: a job does not wait for a URL whose
 * slots are taken by attempts that last, it goes back to Redis for that URL. A retry waits as a delayed job,
 * so it survives restarts; a job whose worker dies comes back to another worker (at-least-once:
 * receivers de-duplicate on the `Webhook-Id` header). Events that fail for good or run out of
 * their window stay in BullMQ's failed set: the dead-letter list of {@link WebhookQueue}.
 *
 * @example
 * ```ts
 * import { WebhookWorker } from 'eventwire/webhook/bullmq'
 *
 * const worker = new WebhookWorker(
 *   { webhooks: [{ url: 'https://hooks.example.com/in' }], sharedSecret: 's3cret' },
 *   { connection: { host: '127.0.0.1', port: 6379, maxRetriesPerRequest: null }, concurrency: 100 },
 * )
 * process.on('SIGTERM', () => worker.close())
 * ```
 */
export class WebhookWorker extends Emitter<WebhookWorkerEvents> {
  readonly #engine: EngineParts
  readonly #transport: WebhookTransport
  /** The worker's own `webhooks`: what a job without a destination goes to; none without them. */
  readonly #own: Serving | undefined
  /** The registry's destinations this worker has served, as of at most a second ago. */
  readonly #destinations: DestinationCache<Serving | NotServed>
  readonly #lanes: WorkerLanes
  /** Each attempt, per destination, for `WebhookQueue.attempts()`; none with `attemptLog: false`. */
  readonly #log: AttemptLog | undefined
  /** What is kept of delivered events, for `WebhookQueue.replay()`; none without `keepSent`. */
  readonly #sent: SentBodies | undefined
  /** This worker's side of fair queueing between destinations: reports what it takes, releases what is parked. */
  #fair: FairQueueing | undefined
  /** Staged alerts of URLs that keep failing; none with `alerts: false`. */
  readonly #alerts: DeliveryAlerts | undefined
  readonly #worker: FaultTolerantWorker<WebhookJobData>
  readonly #started: Promise<void>
  /** Redis's persistence, checked at start and on every reconnect. */
  readonly #durability: DurabilityWatch
  /** Where delivered ids are remembered: `<prefix>:<name>:seen` (see remembered-ids.ts). */
  readonly #seen: string
  /** The connection BullMQ completes jobs on, once connected. */
  #store: MarkerStore | undefined
  /** The ids delivered this turn and their shard hashes, by window, and when they are sent (see `#remember`). */
  #toRemember = new Map<number, (string | number)[]>()
  #remembered: Promise<void> | undefined
  /** Whether this turn's writes to Redis are being held, to leave in one write (see `#holdWrites`). */
  #holding = false
  #closing: Promise<void> | undefined
  /** The key a full Redis is probed with: in the queue's hash slot, expiring at once. */
  readonly #probeKey: string
  /** The wait before the next probe of a full Redis; `undefined` while Redis takes writes. */
  #fullProbeMs: number | undefined
  #probe: ReturnType<typeof setTimeout> | undefined
  /** How long `close()` waits for the jobs in progress by default: an attempt's timeout, and time for Redis. */
  readonly #closeTimeout: number
  /** The jobs this worker holds back for a URL, noted for `WebhookQueue.counts()`. */
  readonly #held: HeldJobs
  /** Redis's clock: what this worker stores for the others (windows, due times) and its breakers are timed by. */
  readonly #clock = new RedisClock()
  /** The next reading of Redis's clock. */
  #clockSync: ReturnType<typeof setTimeout> | undefined
  /** This worker's clock was off by more than the warning's bound at the last reading (warned once until it is not). */
  #skewed = false

  /** @throws `OptionsError` naming the first setting (of `settings`) or option (of `options`) it cannot use. */
  constructor(settings: WebhookSettings | DestinationsWorkerSettings, options: WebhookWorkerOptions) {
    super()
    refuseMemorySettings(settings)
    // Without `webhooks`, resolved as settings with none (the 'optional' case).
    const engine = createEngine(settings as WebhookSettings, defaultPlatform, WORKER_SETTINGS, 'optional')
    this.#engine = engine
    this.#transport = engine.transport
    const resolved = resolveWorkerOptions(options)
    const { breaker, timeoutMs, ratePerUrl } = engine.settings
    const store = async () => (await this.#worker.backend.client) as unknown as BreakerStore & RateStore
    const keys = `${resolved.prefix}:${resolved.name}`
    const streams = async () => (await store()) as unknown as StreamStore
    /** Where a stream writer reports: a failed write as `'error'`, what it dropped as `'warning'` saying `what`. */
    const streamHooks = (what: (count: number) => string) => ({
      failed: (error: Error) => this.#reportError(error),
      dropped: (count: number) => this.#warn(`eventwire: ${what(count)} Deliveries go on; see docs/destinations.md.`),
    })
    this.#log =
      resolved.attemptLog &&
      new AttemptLog(
        keys,
        resolved.attemptLog,
        streams,
        streamHooks(
          (count) =>
            `${count} attempt(s) were not logged: Redis took the attempt log's writes more slowly than this worker made attempts.`,
        ),
      )
    this.#sent =
      resolved.keepSent &&
      new SentBodies(
        keys,
        resolved.keepSent,
        streams,
        streamHooks(
          (count) =>
            `${count} delivered event(s) were not kept for replay: Redis took their writes more slowly than this worker delivered.`,
        ),
      )
    this.#own = engine.endpoints.length === 0 ? undefined : this.#serving(engine, undefined)
    this.#lanes = new WorkerLanes({
      slotsPerUrl: slotsPerUrl(settings, engine.endpoints.length, resolved.concurrency),
      timeoutMs,
      breaker,
      circuit: (url, circuit) => this.emit('url-state', { url, circuit }),
      now: this.#clock.now,
      random: Math.random,
      shared:
        breaker &&
        new SharedBreakers({
          store,
          prefix: keys,
          timeoutMs,
          coolDownMs: breaker.coolDownMs,
          now: this.#clock.now,
          failed: (error) => this.#reportError(error),
        }),
      rates:
        ratePerUrl === undefined
          ? undefined
          : new SharedRates({
              store,
              prefix: keys,
              perSecond: ratePerUrl,
              failed: (error) => this.#reportError(error),
            }),
    })
    const registry = new Registry(keys)
    const registryStore = async () => (await this.#worker.backend.client) as unknown as RegistryStore
    this.#destinations = new DestinationCache({
      registry,
      store: registryStore,
      build: (read) => this.#servingOf(read),
      failed: (error) => this.#reportError(error),
    })
    const writer = new WebhookDestinations(registry, registryStore, (id) => this.#destinations.forget(id), keys)
    this.#alerts =
      resolved.alerts &&
      new DeliveryAlerts(
        keys,
        resolved.alerts,
        engine.settings.retryWindowMs,
        async () => (await store()) as unknown as AlertStore,
        {
          alert: (alert) => this.emit('alert', alert),
          disable: async (id) => {
            const before = await writer.get(id)
            if (before === undefined || !before.enabled) return false
            return (await writer.disable(id))?.enabled === false
          },
          failed: (error) => this.#reportError(error),
        },
      )
    this.#probeKey = `${keys}:eventwire-write-probe`
    this.#held = new HeldJobs(keys)
    this.#closeTimeout = timeoutMs + CLOSE_MARGIN_MS
    this.#worker = new FaultTolerantWorker<WebhookJobData>(resolved.name, (job, token) => this.#process(job, token), {
      connection: resolved.connection,
      prefix: resolved.prefix,
      concurrency: resolved.concurrency,
      lockDuration: resolved.lockDuration,
      stalledInterval: resolved.stalledInterval,
      // A job whose worker died is taken over, however often that happens: delivery is at-least-once.
      maxStalledCount: Number.MAX_SAFE_INTEGER,
      // Jobs are taken only once Redis's persistence has been checked.
      autorun: false,
      // The dead letters' default retention; a job enqueued with another `deadLetters` carries its own.
      removeOnFail: keepDeadLetters(DEAD_LETTER_DEFAULTS),
    })
    this.#seen = `${(this.#worker.keys[''] as string).slice(0, -1)}:seen`
    this.#worker.on('error', (error) => this.#onRedisError(error, undefined))
    this.#worker.on('stalled', (jobId) => this.emit('recovered', { jobId, eventId: eventIdOfJob(jobId) }))
    this.#worker.left = (job, fault) => this.#onRedisError(fault, job.id)
    this.#durability = new DurabilityWatch(resolved.durability, 'WebhookWorker', resolved.prefix, {
      warn: (message) => this.#warn(message),
      // Jobs in progress finish; no new one is taken until a reconnect finds Redis fit again.
      refused: (refusal) => {
        this.#reportError(refusal)
        this.#worker.pause(true).catch((error: unknown) => this.#reportError(error as Error))
      },
      accepted: () => this.#resume(),
    })
    this.#started = this.#start()
    // The outcome is reported as 'error' and by ready(); nothing else waits for it. A start cut
    // short by close() (its connection closed under it) is no news.
    this.#started.catch((error: unknown) => {
      if (this.#closing === undefined) this.#reportError(error as Error)
    })
  }

  async #start(): Promise<void> {
    await this.#worker.waitUntilReady()
    const client = await this.#worker.backend.client
    const store = client as unknown as MarkerStore
    // Once per connection, as BullMQ defines its own scripts (the number of keys comes first).
    if (typeof (store as Partial<MarkerStore>)[REMEMBER] !== 'function')
      store.defineCommand(REMEMBER, { numberOfKeys: 1, lua: REMEMBER_IDS_LUA })
    this.#store = store
    const keys = this.#worker.keys
    this.#fair = new FairQueueing(
      client as unknown as FairStore,
      {
        base: (keys[''] as string).slice(0, -1),
        wait: keys.wait as string,
        marker: keys.marker as string,
        meta: keys.meta as string,
        active: keys.active as string,
      },
      (error) => this.#reportError(error),
    )
    await this.#durability.start(client)
    await this.#syncClock(client as unknown as TimeSource)
    if (this.#closing !== undefined) return
    this.#fair.start()
    this.#worker.run().catch((error: unknown) => this.#reportError(error as Error))
  }

  /**
   * Reads Redis's time, warns when this worker's clock is off from it (once, until it is back
   * within bounds), and reads it again in {@link CLOCK_SYNC_MS}. A reading that fails keeps the
   * last one: Redis's own errors are reported where they happen.
   */
  async #syncClock(source: TimeSource): Promise<void> {
    try {
      await this.#clock.sync(source)
      const skewed = Math.abs(this.#clock.skewMs) > CLOCK_SKEW_WARNING_MS
      if (skewed && !this.#skewed) {
        this.#warn(skewWarning(this.#clock.skewMs))
      }
      this.#skewed = skewed
    } catch {
      // Kept: the last reading, or the local clock before the first.
    }
    if (this.#closing !== undefined) return
    this.#clockSync = setUnrefTimeout(() => void this.#syncClock(source), CLOCK_SYNC_MS)
  }

  /** An endpoint for a URL a job names and its destination no longer lists: reported, never sent to. */
  #retired(url: string): Endpoint {
    return {
      url,
      origin: '',
      path: '',
      headers: {},
      timeoutMs: this.#engine.settings.timeoutMs,
      limiter: this.#engine.shared.limiterFor(url),
      headerShapes: headerShapesOf({}),
    }
  }

  /**
   * The rounds of one destination's events (`undefined`: the worker's own `webhooks`): its URLs,
   * secrets and mode, this worker's settings and clock. Its attempts are told to listeners and
   * written to its attempt log.
   */
  #serving(parts: EngineParts, destination: string | undefined): Serving {
    const log = this.#log
    const rounds = new DeliveryRounds(
      parts,
      {
        listenerCount: (event) => this.listenerCount(event) + (log !== undefined && event === 'attempt' ? 1 : 0),
        emit: (event, ...args) => {
          if (log !== undefined && event === 'attempt')
            log.record(destination, args[0] as AttemptNotice, this.#clock.now())
          // Named as the union: TypeScript cannot match DeliveryEvents[Name] to these events for a generic Name.
          return this.emit<keyof DeliveryEvents>(event, ...args)
        },
      },
      // Deadlines and due times are stored in Redis and read by other processes: on Redis's clock.
      this.#clock.now,
      // A registry destination's results and notices name it (metrics and listeners tell them apart).
      destination,
    )
    return { endpoints: parts.endpoints, rounds }
  }

  /** What a destination read from the registry is for this worker: served, or the reason its events are dead letters. */
  #servingOf(read: ReadDestination): Serving | NotServed {
    if (read.kind === 'absent')
      return {
        refused:
          'ERR_UNKNOWN_DESTINATION: its destination is not in the registry (deleted, or never added): no further request was sent. Add the destination again and re-drive the dead letter, or purge it.',
      }
    if (read.kind === 'unreadable')
      return {
        refused: `ERR_UNKNOWN_DESTINATION: its destination in the registry cannot be read (${read.problem}): no further request was sent. Set the destination again and re-drive the dead letter.`,
      }
    if (!read.resolved.enabled)
      return {
        refused:
          'ERR_DESTINATION_DISABLED: its destination is disabled: no further request was sent. Enable it and re-drive the dead letter to send it.',
      }
    return this.#serving(partsFor(this.#engine, read.resolved), read.resolved.id)
  }

  /** What a job is delivered with: its destination's rounds, or why it cannot be. */
  async #servingFor(data: WebhookJobData): Promise<Serving | NotServed> {
    const { destination } = data
    if (destination !== undefined) {
      const serving = await this.#destinations.get(destination)
      // A refusal is final for the event: read the registry again rather than trust a view up to
      // a second old (a destination enabled just now, and its dead letters re-driven at once).
      return 'refused' in serving ? this.#destinations.reread(destination) : serving
    }
    return (
      this.#own ?? {
        refused:
          'ERR_UNKNOWN_DESTINATION: the event names no destination and this worker has no `webhooks` of its own; not sent. Enqueue events with { destination }, or give the workers `webhooks`, then re-drive the dead letter.',
      }
    )
  }

  #warn(message: string): void {
    if (!this.emit('warning', message)) console.warn(message)
  }

  #reportError(error: Error): void {
    if (!this.emit('error', error)) console.error('eventwire: webhook worker:', error.message)
  }

  /** Takes jobs again, unless Redis is still refused (durability), full, or the worker closing. */
  #resume(): void {
    if (this.#closing === undefined && this.#durability.refusal === undefined && this.#fullProbeMs === undefined)
      void this.#worker.resume()
  }

  /**
   * An error of BullMQ's or of a job's step. A job's fault leaves the job in Redis (see
   * {@link FaultTolerantWorker}); a full Redis stops the worker: every step of every job would be
   * refused, and BullMQ would try again and again at once, with an error each time.
   */
  #onRedisError(error: Error, jobId: string | undefined): void {
    if (isOutOfMemory(error)) {
      this.#redisFull(error)
      return
    }
    if (jobId === undefined) {
      this.#reportError(error)
      return
    }
    this.#reportError(
      new RedisFaultError(
        `Redis refused a step of job ${jobId} (${describeError(error)}): the job is not failed for it. It stays in Redis and a worker takes it again once its lock expires (lockDuration, then up to stalledInterval); what was sent may be sent again.`,
        jobId,
        error,
      ),
    )
  }

  #redisFull(error: Error): void {
    if (this.#fullProbeMs !== undefined || this.#closing !== undefined) return
    this.#fullProbeMs = FIRST_PROBE_MS
    this.#reportError(
      new RedisFaultError(
        `Redis is full and refuses writes (${describeError(error)}): this worker takes no job until Redis takes writes again, and checks every few seconds. Free memory or raise maxmemory: under maxmemory-policy noeviction a full Redis stops delivery as well as enqueue().`,
        undefined,
        error,
      ),
    )
    this.#worker.pause(true).catch((paused: unknown) => this.#reportError(paused as Error))
    this.#probeLater()
  }

  /** Tries one write that expires at once, after a wait that grows; the worker goes on when Redis takes it. */
  #probeLater(): void {
    const wait = this.#fullProbeMs ?? FIRST_PROBE_MS
    this.#probe = setUnrefTimeout(() => {
      this.#probe = undefined
      void this.#probeNow(wait)
    }, wait)
  }

  async #probeNow(waited: number): Promise<void> {
    if (this.#closing !== undefined) return
    try {
      const client = await this.#worker.backend.client
      await client.set(this.#probeKey, '1', { PX: 1_000 })
    } catch {
      this.#fullProbeMs = Math.min(waited * 2, MAX_PROBE_MS)
      this.#probeLater()
      return
    }
    this.#fullProbeMs = undefined
    this.#resume()
  }

  /**
   * Resolves when the worker is connected, Redis's persistence fits `durability`, and it takes jobs.
   *
   * @throws `OptionsError` (as a rejection) on `durability` when Redis would lose acknowledged events under `strict`.
   */
  async ready(): Promise<void> {
    await this.#started
    await this.#worker.waitUntilReady()
  }

  /**
   * Each configured URL as this worker process sees it now: attempts in flight, its slots, jobs
   * waiting a moment for a slot, and its breaker. The backlog itself waits in Redis: see
   * `WebhookQueue.counts()`.
   *
   * @example
   * ```ts
   * import { WebhookWorker } from 'eventwire/webhook/bullmq'
   *
   * const worker = new WebhookWorker(
   *   { webhooks: [{ url: 'https://hooks.example.com/in' }] },
   *   { connection: { host: '127.0.0.1', port: 6379, maxRetriesPerRequest: null } },
   * )
   * for (const url of worker.backlog()) console.log(url.url, url.inFlight, url.slots, url.circuit)
   * ```
   */
  backlog(): WorkerUrlState[] {
    return this.#lanes.backlog((this.#own?.endpoints ?? []).map((endpoint) => endpoint.url))
  }

  /**
   * Stops taking jobs, lets the ones in progress finish their round (a retry goes back to Redis as
   * a delayed job), then releases connections. Safe to call more than once.
   *
   * Resolves by `timeout` (ms) even when Redis is down: jobs still in progress then stay in
   * Redis, and a worker takes them again once their locks expire. @defaultValue the attempt
   * timeout (`timeoutMs`) plus 5 s
   */
  close(options: WorkerCloseOptions = {}): Promise<void> {
    this.#closing ??= this.#shutdown(timeoutOption('timeout', options.timeout, this.#closeTimeout))
    return this.#closing
  }

  async #shutdown(timeout: number): Promise<void> {
    clearTimeout(this.#probe)
    clearTimeout(this.#clockSync)
    this.#destinations.close()
    // On a connection the worker shares, the once-a-minute check would go on after close.
    this.#durability.stop()
    // The attempts and alerts so far, within the same deadline; those of the jobs still in
    // progress are written as each ends (#process).
    const started = performance.now()
    await settlesWithin(Promise.all([this.#toldAll(), this.#fair?.stop()]), timeout)
    const left = Math.max(0, timeout - (performance.now() - started))
    await closeWithin(this.#worker, left, (error) => this.#reportError(error as Error))
    await this.#transport.close?.()
  }

  /**
   * Holds this worker's writes to Redis until the event loop's next check phase, and sends them
   * in one socket write: the completions of the jobs that end meanwhile (a write to Redis cost
   * more CPU than the commands in it). For jobs that end without a marker to write (see
   * `#sendMarkers` for those that do). A cluster client writes to several sockets: it sends at once.
   */
  #holdWrites(): void {
    const stream = this.#store?.stream
    if (this.#holding || stream === undefined) return
    this.#holding = true
    stream.cork()
    setImmediate(() => {
      this.#holding = false
      stream.uncork()
    })
  }

  /**
   * Remembers a delivered event's id for its de-duplication window, in a small hash of the span
   * of the window it falls in on Redis's clock (remembered-ids.ts: no clock of a producer's or a
   * worker's is read), so that `enqueue()` answers `'duplicate'` once its job is gone. Written
   * here rather than when it is enqueued, so that a waiting event costs Redis nothing for it. The
   * ids of the jobs delivered in one turn of the event loop go in one command, sent before their
   * processors return: BullMQ's completions follow on the same connection, so an id is never
   * unknown in between. A job enqueued with BullMQ's own `deduplication` (by an earlier version)
   * has its key already.
   */
  #remember(job: Job<WebhookJobData>, data: WebhookJobData): Promise<void> | undefined {
    if (job.opts.deduplication !== undefined || this.#store === undefined) return undefined
    const window = data.dedupWindowMs ?? DEFAULT_DEDUP_WINDOW_MS
    if (!(window > 0)) return undefined
    const jobId = job.id as string
    let ids = this.#toRemember.get(window)
    if (ids === undefined) {
      ids = []
      this.#toRemember.set(window, ids)
    }
    ids.push(jobId, shardHash(jobId))
    this.#remembered ??= new Promise((resolve) =>
      setImmediate(() => {
        this.#sendMarkers()
        resolve()
      }),
    )
    return this.#remembered
  }

  /** Sends the ids gathered since the last time, one command per window (see `#remember`). */
  #sendMarkers(): void {
    const store = this.#store as MarkerStore
    const byWindow = this.#toRemember
    this.#toRemember = new Map()
    this.#remembered = undefined
    // The markers and the completions that follow them leave in one socket write, as soon as the
    // processors this resolves have returned: a tick queued from a microtask runs once the
    // microtask queue is empty, and so after BullMQ's completions, which take microtasks only.
    const stream = store.stream
    stream?.cork()
    queueMicrotask(() => process.nextTick(() => stream?.uncork()))
    for (const [window, ids] of byWindow) {
      store[REMEMBER](`${this.#seen}-windows`, this.#seen, window, ...ids).catch((error: unknown) =>
        this.#reportError(error as Error),
      )
    }
  }

  /** The attempts logged, and the alerts raised in Redis told. */
  async #toldAll(): Promise<void> {
    await Promise.all([this.#log?.flush(), this.#sent?.flush(), this.#alerts?.settled()])
  }

  /** Delivers a job; once the worker is closing, its attempts and alerts are written before it ends (the connection closes after the last). */
  async #process(job: Job<WebhookJobData>, token: string | undefined): Promise<void> {
    if (this.#log === undefined && this.#sent === undefined && this.#alerts === undefined)
      return this.#deliver(job, token)
    try {
      return await this.#deliver(job, token)
    } finally {
      if (this.#closing !== undefined) await this.#toldAll()
    }
  }

  async #deliver(job: Job<WebhookJobData>, token: string | undefined): Promise<void> {
    // Taken by a fetch already under way when a reconnect found Redis falling short: back, unsent.
    if (this.#durability.refusal !== undefined) {
      await job.moveToWait(token)
      throw new WaitingError()
    }
    // Taken for the first time: no longer one of its destination's events waiting for a worker.
    if (job.attemptsStarted <= 1) this.#fair?.taken(job.id as string, partyOfJob(job.id as string))
    const unreadable = unreadableReason(job)
    // Final at once: a job that cannot be read would fail the same way on every attempt.
    if (unreadable !== undefined)
      throw new UnrecoverableError(
        `ERR_INVALID_FIELD: ${unreadable}; not sent. Remove the job, or fix its data and re-drive it.`,
      )
    const data = job.data
    const serving = await this.#servingFor(data)
    // Final: a destination disabled or gone; re-driven once it is back. Told as any dead letter
    // is, with no URL: those of a destination that is gone are not known.
    if ('refused' in serving) {
      this.emit('failed', {
        status: 'failed',
        eventId: data.eventId,
        ...(data.destination === undefined ? {} : { destination: data.destination }),
        attempts: data.state?.rounds ?? 0,
        urls: [],
        durationMs: Math.max(0, this.#clock.now() - job.timestamp),
      })
      throw new UnrecoverableError(serving.refused)
    }
    const { rounds, endpoints } = serving
    // BullMQ counts the runs of a job that stopped without finishing; the state keeps how many the
    // last stored round had seen, so each one is told once, by the run after it.
    const stalls = job.stalledCounter ?? 0
    if (stalls > (data.stalls ?? 0)) this.emit('repeated', { jobId: job.id as string, eventId: data.eventId, stalls })
    // A stored state with nothing left to send is a dead letter run again (redrive(), a
    // dashboard's Retry, BullMQ's Job.retry): it starts afresh, but for the URLs that took it.
    const state = data.state?.targets.some((target) => target.status === 'pending')
      ? restoreState(data.state, endpoints, (url) => this.#retired(url))
      : keepDelivered(rounds.start(data.eventId), data.state)
    // The signature is not stored: each round signs again, once for all of its attempts.
    const preparing = rounds.prepare(data.eventId, data.body)
    // A node:crypto signature is ready at once: no turn of the microtask queue for it.
    const prepared = preparing instanceof Promise ? await preparing : preparing
    const decision =
      'cause' in prepared
        ? rounds.refuseUnsigned(state, prepared)
        : await rounds.runUrls(state, prepared, (target) => this.#lanes.admitNow(target.endpoint.url))
    this.#alerts?.afterRound(data.destination, endpoints, state, this.#clock.now())
    // The state is written only for a job that stays in Redis: to be retried, or as a dead letter.
    const keepState = () =>
      job.updateData({ ...freshData(data), state: storeState(state), ...(stalls > 0 ? { stalls } : {}) })
    // What the round held back (or no longer holds), for the queue's counts: sent before the job
    // moves, on the same connection. A failure to note it delays nothing.
    const store = this.#store as unknown as HeldStore
    const retrying = decision.kind === 'retry'
    this.#held
      .record(store, job.id as string, data.state, retrying ? state : undefined, retrying ? decision.dueAt : 0)
      ?.catch((error: unknown) => this.#reportError(error as Error))
    if (decision.kind === 'retry') {
      await keepState()
      rounds.announceRetry(state, decision.dueAt)
      // BullMQ's delayed jobs run on each worker's own clock: it is given the wait, counted from
      // this worker's now. The job comes back on time at this worker, and at every worker whose
      // clock agrees with this one's; at another, a round finds nothing due yet and sends it back
      // on that worker's clock.
      // At most the longest timer away: a stored state that says a time far off (written by
      // something else with Redis access) has the job come back and looked at again, not parked.
      await job.moveToDelayed(Date.now() + Math.min(decision.dueAt - this.#clock.now(), MAX_TIMER_MS), token)
      throw new DelayedError()
    }
    const remembered = decision.kind === 'finished' && decision.delivered ? this.#remember(job, data) : undefined
    const result = rounds.finish(state, job.timestamp)
    if (remembered !== undefined) await remembered
    else this.#holdWrites()
    // Delivered: the job is removed on completion, so its state is not written first.
    if (result.status === 'delivered') {
      if (data.replayed !== true) this.#sent?.record(data.destination, data.eventId, data.body)
      return
    }
    await keepState()
    throw new UnrecoverableError(
      `not delivered after ${state.rounds} round(s): ${result.urls.map(reasonAt).join('; ')}`,
    )
  }
}

/**
 * Why a URL failed, as a dead letter keeps it: the code, the status, and the cause's text
 * (`connect ECONNREFUSED 127.0.0.1:8790`), bounded and without control characters, since it came
 * from the network and is shown in dashboards and logs.
 */
function reasonAt(url: WebhookUrlResult): string {
  const status = url.lastStatus ? ` ${url.lastStatus}` : ''
  const cause = url.lastError?.cause
  const text = cause === undefined ? '' : ` (${causeText(cause)})`
  return `${url.url}: ${url.lastError?.code ?? url.status}${status}${text}`
}
