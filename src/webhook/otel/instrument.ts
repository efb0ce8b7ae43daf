import {
  createNoopMeter,
  diag,
  metrics,
  type Attributes,
  type BatchObservableResult,
  type MeterProvider,
} from '@opentelemetry/api'
import { checkOptionNames, timeoutOption } from '../../core/option-checks.js'
import { OptionsError } from '../../core/errors/options-error.js'
import { LIBRARY } from '../../core/version.js'
import type { CircuitState } from '../delivery/circuit-breaker.js'
import type { UrlStateNotice } from '../delivery/destination-base.js'
import type { AttemptNotice, DeliveryResult } from '../delivery/result.js'
import type { UrlBacklog } from '../delivery/url-lanes.js'
import { ATTR, DestinationAttributes, UrlAttributes } from './attributes.js'
import { CountsReader, type QueueCountsLike } from './counts-reader.js'
import { createInstruments, type WebhookInstruments } from './instruments.js'

/**
 * A delivery engine whose events are measured: a `WebhookDestination` or a `WebhookWorker`. A
 * destination's `backlog()` gives the per-URL gauges too.
 */
export interface InstrumentedEngine {
  on(event: 'delivered' | 'failed' | 'skipped', listener: (result: DeliveryResult) => void): unknown
  on(event: 'attempt', listener: (notice: AttemptNotice) => void): unknown
  on(event: 'url-state', listener: (notice: UrlStateNotice) => void): unknown
  off(event: 'delivered' | 'failed' | 'skipped', listener: (result: DeliveryResult) => void): unknown
  off(event: 'attempt', listener: (notice: AttemptNotice) => void): unknown
  off(event: 'url-state', listener: (notice: UrlStateNotice) => void): unknown
}

/** A queue whose depth is observed: a `WebhookQueue`. */
export interface InstrumentedQueue {
  counts(): Promise<QueueCountsLike>
}

/** Options of {@link instrumentWebhooks}. */
export interface InstrumentOptions {
  /**
   * Where the instruments are created. By default the global provider, as it is when
   * `instrumentWebhooks` is called: register the SDK first.
   */
  meterProvider?: MeterProvider | undefined
  /**
   * The `eventwire.webhook.url` attribute of a configured URL (return `undefined` to leave it
   * out). By default URLs are named by `server.address` and `server.port` only: a webhook URL's
   * path or query often holds a token, and metrics are no place for it.
   */
  urlLabel?: ((url: string) => string | undefined) | undefined
  /**
   * The `eventwire.webhook.destination` attribute of a registry destination's deliveries and
   * attempts on a `WebhookWorker` (return `undefined` to leave it out). Off by default: a platform
   * may have many thousand destinations, and a metrics backend keeps a series for each value. At
   * most 100 distinct values are used; the destinations past them share `_other`.
   */
  destinationLabel?: ((destination: string) => string | undefined) | undefined
  /** Added to every measurement: to tell apart two engines or queues of one process. */
  attributes?: Attributes | undefined
  /**
   * How long a collection waits for the queue's `counts()` (ms). A slower Redis leaves that
   * collection without queue gauges, and only one read is ever in flight. @defaultValue 5_000
   */
  countsTimeout?: number | undefined
}

/** What {@link instrumentWebhooks} returns. */
export interface WebhookInstrumentation {
  /** Stops measuring: the listeners and gauge callbacks go. Safe to call more than once. */
  stop(): void
}

/** The default `countsTimeout`: longer than a healthy Redis takes, shorter than an exporter's own timeout. */
export const DEFAULT_COUNTS_TIMEOUT = 5_000

const KNOWN_OPTIONS = {
  meterProvider: true,
  urlLabel: true,
  destinationLabel: true,
  attributes: true,
  countsTimeout: true,
} as const

const CIRCUIT_STATES: readonly CircuitState[] = ['closed', 'open', 'half-open']

/**
 * Records the metrics of a webhook engine, or observes a durable queue, through the OpenTelemetry
 * API: deliveries and their duration, attempts and their duration (`http.client.request.duration`),
 * and per URL the circuit breaker and backlog of a `WebhookDestination`; queue depth, dead letters
 * and the oldest waiting event's age of a `WebhookQueue`. With no SDK registered (the API's no-op
 * meter) it listens to nothing. See docs/metrics.md for every instrument, its unit and attributes.
 *
 * @throws `OptionsError` for a source that is none of these, or an option it cannot use.
 * @example
 * ```ts
 * import { WebhookDestination } from 'eventwire/webhook'
 * import { instrumentWebhooks } from 'eventwire/webhook/otel'
 *
 * const destination = new WebhookDestination({ webhooks: [{ url: 'https://hooks.example.com/in' }] })
 * // After the OpenTelemetry SDK is registered, or with { meterProvider }.
 * const metrics = instrumentWebhooks(destination, { urlLabel: (url) => new URL(url).host })
 * // ...
 * metrics.stop()
 * await destination.close()
 * ```
 */
export function instrumentWebhooks(
  source: InstrumentedEngine | InstrumentedQueue,
  options: InstrumentOptions = {},
): WebhookInstrumentation {
  checkOptionNames(options as Record<string, unknown>, KNOWN_OPTIONS)
  const countsTimeout = timeoutOption('countsTimeout', options.countsTimeout, DEFAULT_COUNTS_TIMEOUT)
  if (options.urlLabel !== undefined && typeof options.urlLabel !== 'function') {
    throw new OptionsError('urlLabel', 'expected a function from a configured URL to its label, or nothing.')
  }
  if (options.destinationLabel !== undefined && typeof options.destinationLabel !== 'function') {
    throw new OptionsError(
      'destinationLabel',
      "expected a function from a destination's id to its label, such as (id) => id, or nothing.",
    )
  }
  if (options.attributes !== undefined && (typeof options.attributes !== 'object' || options.attributes === null)) {
    throw new OptionsError(
      'attributes',
      "expected an object of attribute names and values, such as { 'service.instance.id': 'a' }.",
    )
  }
  if (options.meterProvider !== undefined && typeof options.meterProvider?.getMeter !== 'function') {
    throw new OptionsError(
      'meterProvider',
      "expected an OpenTelemetry MeterProvider (the SDK's), or nothing for the global one.",
    )
  }
  if (!isQueue(source) && !isEngine(source)) {
    throw new OptionsError(
      'source',
      'is not a WebhookDestination, WebhookWorker or WebhookQueue: pass the engine or the queue to measure.',
    )
  }
  const provider = options.meterProvider ?? metrics.getMeterProvider()
  // The instrumentation scope: the package's name and version.
  const meter = provider.getMeter(LIBRARY.name, LIBRARY.version)
  if (meter === createNoopMeter()) {
    // No SDK: every measurement would be dropped, and a meter never turns into another one. Not
    // listening at all keeps an engine's cost what it is without metrics.
    diag.debug('eventwire: instrumentWebhooks found no OpenTelemetry SDK registered; nothing is measured.')
    return { stop: () => undefined }
  }
  const instruments = createInstruments(meter)
  const common: Attributes = { ...options.attributes }
  let stop: () => void
  const urls = new UrlAttributes(options.urlLabel, common)
  if (isQueue(source)) stop = observeQueue(source, instruments, urls, common, countsTimeout)
  else {
    const destinations = options.destinationLabel && new DestinationAttributes(options.destinationLabel)
    const unsubscribe = recordEngine(source, instruments, urls, common, destinations)
    const unobserve = hasBacklog(source) ? observeLanes(source, instruments, urls) : () => undefined
    stop = () => {
      unsubscribe()
      unobserve()
    }
  }
  let stopped = false
  return {
    stop() {
      if (stopped) return
      stopped = true
      stop()
    },
  }
}

function isQueue(source: unknown): source is InstrumentedQueue {
  return typeof (source as Partial<InstrumentedQueue> | null)?.counts === 'function'
}

function isEngine(source: unknown): source is InstrumentedEngine {
  const engine = source as Partial<InstrumentedEngine> | null
  return typeof engine?.on === 'function' && typeof engine.off === 'function'
}

/**
 * An engine that shows its URLs: a `WebhookDestination` (its lanes, with their backlog) or a
 * `WebhookWorker` (each URL as its process sees it: no backlog, which waits in Redis).
 */
interface LaneEngine extends InstrumentedEngine {
  backlog(): readonly (Pick<UrlBacklog, 'url' | 'circuit'> & Partial<UrlBacklog>)[]
}

function hasBacklog(source: InstrumentedEngine): source is LaneEngine {
  return typeof (source as Partial<LaneEngine>).backlog === 'function'
}

/** What a `WebhookWorker` tells of jobs run again after a fault. */
interface RecoveringEngine {
  on(event: 'recovered' | 'repeated', listener: () => void): unknown
  off(event: 'recovered' | 'repeated', listener: () => void): unknown
}

/** Counts events and attempts as the engine tells them. */
function recordEngine(
  engine: InstrumentedEngine,
  instruments: WebhookInstruments,
  urls: UrlAttributes,
  common: Attributes,
  destinations: DestinationAttributes | undefined,
): () => void {
  const labelled = (base: Attributes, destination: string | undefined) =>
    destinations === undefined ? base : destinations.with(base, destination)
  const outcomes = {
    delivered: { ...common, [ATTR.outcome]: 'delivered' },
    failed: { ...common, [ATTR.outcome]: 'failed' },
    skipped: { ...common, [ATTR.outcome]: 'skipped' },
  }
  const ended = (result: DeliveryResult) => {
    instruments.deliveries.add(1, labelled(outcomes[result.status], result.destination))
    if (result.status === 'delivered' && result.durationMs !== undefined) {
      instruments.deliveryDuration.record(result.durationMs / 1000, labelled(common, result.destination))
    }
  }
  const attempted = (notice: AttemptNotice) => {
    const { attempt, request } = urls.ofAttempt(notice)
    instruments.attempts.add(1, labelled(attempt, notice.destination))
    if (notice.durationMs !== undefined)
      instruments.requestDuration.record(notice.durationMs / 1000, labelled(request, notice.destination))
  }
  const changed = (notice: UrlStateNotice) => {
    instruments.circuitChanges.add(1, { ...urls.of(notice.url), [ATTR.circuitState]: notice.circuit })
  }
  const recovered = () => instruments.recoveredJobs.add(1, common)
  const repeated = () => instruments.repeatedRuns.add(1, common)
  for (const event of ['delivered', 'failed', 'skipped'] as const) engine.on(event, ended)
  engine.on('attempt', attempted)
  // Both engines emit it: a destination for its breakers, a worker for its process's.
  engine.on('url-state', changed)
  // A worker's alone; a destination has no such events, and its listeners are never called.
  const faults = engine as unknown as RecoveringEngine
  faults.on('recovered', recovered)
  faults.on('repeated', repeated)
  return () => {
    for (const event of ['delivered', 'failed', 'skipped'] as const) engine.off(event, ended)
    engine.off('attempt', attempted)
    engine.off('url-state', changed)
    faults.off('recovered', recovered)
    faults.off('repeated', repeated)
  }
}

/** The per-URL gauges of a destination or a worker, read from `backlog()` at each collection. */
function observeLanes(engine: LaneEngine, instruments: WebhookInstruments, urls: UrlAttributes): () => void {
  const { queueDepth, circuitStatus } = instruments
  const observe = (result: BatchObservableResult) => {
    for (const url of engine.backlog()) {
      const server = urls.of(url.url)
      // A destination's deliveries per URL; a worker's wait in Redis, counted by the queue's gauges.
      if (url.queued !== undefined && url.retrying !== undefined && url.inFlight !== undefined) {
        result.observe(queueDepth, url.queued, { ...server, [ATTR.queueState]: 'waiting' })
        result.observe(queueDepth, url.retrying, { ...server, [ATTR.queueState]: 'retrying' })
        result.observe(queueDepth, url.inFlight, { ...server, [ATTR.queueState]: 'active' })
      }
      for (const state of CIRCUIT_STATES) {
        result.observe(circuitStatus, url.circuit === state ? 1 : 0, { ...server, [ATTR.circuitState]: state })
      }
    }
  }
  const observables = [queueDepth, circuitStatus]
  const { meter } = instruments
  meter.addBatchObservableCallback(observe, observables)
  return () => meter.removeBatchObservableCallback(observe, observables)
}

/** The queue's gauges, from one `counts()` per collection at most (see {@link CountsReader}). */
function observeQueue(
  queue: InstrumentedQueue,
  instruments: WebhookInstruments,
  urls: UrlAttributes,
  common: Attributes,
  timeoutMs: number,
): () => void {
  const { queueDepth, deadLetters, oldestWaitingAge, heldByUrl, lateness } = instruments
  const reader = new CountsReader(() => queue.counts(), timeoutMs)
  const states = {
    waiting: { ...common, [ATTR.queueState]: 'waiting' },
    retrying: { ...common, [ATTR.queueState]: 'retrying' },
    held: { ...common, [ATTR.queueState]: 'held' },
    active: { ...common, [ATTR.queueState]: 'active' },
  }
  const observe = async (result: BatchObservableResult) => {
    const counts = await reader.read()
    if (counts === undefined) return
    result.observe(queueDepth, counts.waiting, states.waiting)
    result.observe(queueDepth, counts.retrying, states.retrying)
    result.observe(queueDepth, counts.heldByBreaker + counts.heldForSlots, states.held)
    result.observe(queueDepth, counts.active, states.active)
    result.observe(deadLetters, counts.failed, common)
    result.observe(oldestWaitingAge, (counts.oldestWaitingMs ?? 0) / 1000, common)
    result.observe(lateness, (counts.lateMs ?? 0) / 1000, common)
    // Only the URLs holding events now: bounded by the URLs the workers send to.
    for (const url of counts.urls) {
      const server = urls.of(url.url)
      result.observe(heldByUrl, url.heldByBreaker, { ...server, [ATTR.heldReason]: 'breaker' })
      result.observe(heldByUrl, url.heldForSlots, { ...server, [ATTR.heldReason]: 'slots' })
    }
  }
  const observables = [queueDepth, deadLetters, oldestWaitingAge, lateness, heldByUrl]
  const { meter } = instruments
  meter.addBatchObservableCallback(observe, observables)
  return () => meter.removeBatchObservableCallback(observe, observables)
}
