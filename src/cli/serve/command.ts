import type { WireMessage } from '../../index.js'
import type { WebhookEvent } from '../../webhook/index.js'
import type { WebhookQueue, WebhookWorker } from '../../webhook/bullmq/index.js'
import type { WriteKeys } from '../ingest/ingest-request.js'
import { countArgument, InvalidArgumentError, millisecondsArgument, portArgument } from '../arguments.js'
import { defineCommand, type Command } from '../command-line.js'
import { EXIT, type ExitCode } from '../exit-codes.js'
import { closeServer } from '../http.js'
import type { OptionSpecs, OptionValues } from '../options.js'
import { withoutCredentials } from '../redact.js'
import { Repeats } from './repeats.js'
import { inServeWords } from './serve-words.js'
import { connectionOf, loadBullmq, REDIS_OPTIONS } from '../registry/connect.js'
import { addressOptions, startServer } from '../server-options.js'
import { untilStopped } from '../signals.js'
import { writeJsonLine } from '../terminal.js'
import { UsageError } from '../usage.js'
import { alertEntry } from './alert-entry.js'
import { readConfig, seed, type Seeded } from './config-file.js'
import { createServeMetrics, type ServeMetrics } from './serve-metrics.js'
import { createServeServer, DEFAULT_MAX_CONNECTIONS, type ServedSource } from './serve-server.js'
import { DEFAULT_RATE_LIMIT, SourceRates } from './source-rates.js'

/** The port `eventwire serve` listens on by default. */
export const DEFAULT_SERVE_PORT = 8080

/**
 * The shortest `--lock-duration`: a worker renews its locks at half of it, so much less would
 * let a busy but living worker lose its deliveries to another (and send them twice).
 */
const MIN_LOCK_MS = 1_000

const { json: _json, ...QUEUE_OPTIONS } = REDIS_OPTIONS

const OPTIONS = {
  ...QUEUE_OPTIONS,
  ...addressOptions(DEFAULT_SERVE_PORT),
  config: {
    long: 'config',
    short: 'c',
    value: 'path',
    description:
      'sources (write keys and their destinations) and destinations to write into the registry at start and on SIGHUP, as JSON',
    env: 'EVENTWIRE_CONFIG',
  },
  role: {
    long: 'role',
    value: 'role',
    description: 'ingest: take calls; worker: deliver; all: both (the default)',
    choices: ['ingest', 'worker', 'all'],
    default: 'all',
  },
  concurrency: {
    long: 'concurrency',
    value: 'n',
    description: 'worker: deliveries in flight at once (50 by default)',
    parse: (text: string) => {
      const n = countArgument(text)
      if (n < 1) throw new InvalidArgumentError('expected 1 or more.')
      return n
    },
  },
  lockDuration: {
    long: 'lock-duration',
    value: 'ms',
    description:
      'worker: how long the deliveries of a worker that died stay held before another worker takes them (30000)',
    parse: (text: string) => {
      const ms = millisecondsArgument(text)
      if (ms < MIN_LOCK_MS) throw new InvalidArgumentError(`expected at least ${MIN_LOCK_MS} ms.`)
      return ms
    },
  },
  rateLimit: {
    long: 'rate-limit',
    value: 'n',
    description: `ingest: requests a second each source may send to this process, 0 for no limit (${DEFAULT_RATE_LIMIT}); a source's own rateLimit in --config wins`,
    parse: countArgument,
    default: DEFAULT_RATE_LIMIT,
  },
  maxConnections: {
    long: 'max-connections',
    value: 'n',
    description: `ingest: connections open at once; more are closed as they come (${DEFAULT_MAX_CONNECTIONS})`,
    parse: (text: string) => {
      const n = countArgument(text)
      if (n < 1) throw new InvalidArgumentError('expected 1 or more.')
      return n
    },
    default: DEFAULT_MAX_CONNECTIONS,
  },
  metricsPort: {
    long: 'metrics-port',
    value: 'port',
    description:
      'serve metrics in the Prometheus text format at GET /metrics on this port, at --host; needs @opentelemetry/api',
    parse: portArgument,
  },
  durability: {
    long: 'durability',
    value: 'mode',
    description: 'strict: refuse a Redis that could lose acknowledged events (the default); best-effort: warn',
    choices: ['strict', 'best-effort'],
    default: 'strict',
  },
  drainTimeout: {
    long: 'drain-timeout',
    value: 'ms',
    description: 'on SIGTERM, how long requests and deliveries in flight may take before they are cut (10000)',
    parse: millisecondsArgument,
    default: 10_000,
  },
} as const satisfies OptionSpecs

type ServeOptions = OptionValues<typeof OPTIONS>

/** One JSON line on stdout: what an operator's log collector reads. Never a write key or a secret. */
function log(entry: Readonly<Record<string, unknown>>): void {
  writeJsonLine(process.stdout, { time: new Date().toISOString(), level: 'info', ...entry })
}

/**
 * A warning or error the same as one logged within this long (ms) is counted, not logged again;
 * the count is logged once the window is over. While Redis is down, each connection of a process
 * reports the same error every second.
 */
export const REPEATS_WINDOW_MS = 10_000

/** Why serve cannot listen (a port in use, an address not here), as the JSON line that ends its start. */
function cannotListen(message: string): void {
  log({ level: 'error', event: 'start-failed', message })
}

/**
 * Stores a request's messages for each destination of its source, all at once; a destination
 * deleted since is skipped and logged. A message without a `userId` is taken and not stored: a
 * webhook carries the userId, and an anonymous page view must not cost its batch a 400 (the
 * client would drop the whole batch).
 */
function storeFor(queue: WebhookQueue): (source: ServedSource, messages: WireMessage[]) => Promise<void> {
  return async (source, messages) => {
    // The client's rules checked each message, which is what an event promises.
    const events = messages.filter(
      (message) => typeof message.userId === 'string' && message.userId !== '',
    ) as unknown as WebhookEvent[]
    if (events.length < messages.length)
      log({
        event: 'not-forwarded',
        source: source.id,
        events: messages.length - events.length,
        reason: 'no userId: a webhook carries the userId, and an anonymousId is not forwarded',
      })
    if (events.length === 0) return
    await Promise.all(
      source.destinations.map(async (destination) => {
        try {
          const results = await enqueueSendable(queue, events, destination, (refusal) =>
            log({
              event: 'not-forwarded',
              source: source.id,
              destination,
              events: 1,
              // The queue's own words, without the position in a batch this process made.
              reason: ((refusal.cause as Error | undefined) ?? refusal).message,
            }),
          )
          // A disabled destination takes nothing: its events are answered 200 and not sent, as disabling means.
          const disabled = results.filter((result) => result.status === 'disabled').length
          if (disabled > 0)
            log({
              event: 'not-forwarded',
              source: source.id,
              destination,
              events: disabled,
              reason: 'the destination is disabled: eventwire destinations enable sends its new events again',
            })
        } catch (error) {
          if ((error as { code?: unknown }).code !== 'ERR_UNKNOWN_DESTINATION') throw error
          log({ level: 'warn', event: 'unknown-destination', source: source.id, destination, events: events.length })
        }
      }),
    )
  }
}

/** Most ids a seed's log line names. */
const IDS_LOGGED = 20

/**
 * A seed as logged: how many ids it added, which the registry had already (kept as they are
 * there), and which were deleted from it (left deleted).
 */
function seedEntry({ added, kept, deleted }: Seeded): Record<string, unknown> {
  const said: string[] = []
  if (kept.length > 0)
    said.push(
      'the registry had the kept ones already and keeps them as they are: change them with eventwire sources set or destinations set',
    )
  if (deleted.length > 0)
    said.push(
      'the deleted ones were deleted from the registry and stay deleted: set them again with eventwire sources set or destinations set to have them back',
    )
  return {
    added: added.length,
    kept: kept.length,
    ...(kept.length === 0 ? {} : { keptIds: kept.slice(0, IDS_LOGGED) }),
    ...(deleted.length === 0 ? {} : { deleted: deleted.length, deletedIds: deleted.slice(0, IDS_LOGGED) }),
    ...(said.length === 0 ? {} : { message: said.join('; ') }),
  }
}

/**
 * `enqueueBulk` of the events a destination can be sent: one whose messageId it cannot carry (a
 * "." to a destination that signs with Standard Webhooks) is left out and told, and the rest
 * are enqueued, as a call without a `userId` is: one such call must not cost its batch a 400.
 * The queue checks every event before it stores any, so a refusal stored nothing.
 */
async function enqueueSendable(
  queue: WebhookQueue,
  events: readonly WebhookEvent[],
  destination: string,
  leftOut: (refusal: Error) => void,
): Promise<Awaited<ReturnType<WebhookQueue['enqueueBulk']>>> {
  let sendable = events
  for (;;) {
    try {
      return await queue.enqueueBulk(sendable, { destination })
    } catch (error) {
      const { code, field, index } = error as { code?: unknown; field?: unknown; index?: unknown }
      if (code !== 'ERR_INVALID_FIELD' || field !== 'messageId' || typeof index !== 'number') throw error
      leftOut(error as Error)
      sendable = sendable.filter((_event, at) => at !== index)
    }
  }
}

/** How long `/readyz` waits for Redis to answer, in ms. */
const READY_PROBE_MS = 1_000

/** Whether `work` settles within `ms`; a rejection is an answer too (Redis answered it). */
async function answersWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms)
  })
  try {
    return await Promise.race([work.then(() => true), late])
  } finally {
    clearTimeout(timer)
  }
}

/** Whose write keys serve takes: the registry's sources, as this process last read them (at most a second ago). */
function registryKeys(queue: WebhookQueue): WriteKeys<ServedSource> {
  return {
    sourceOf: (writeKey) => queue.sources.find(writeKey),
    sameSource: (a, b) => a.id === b.id,
    missingHint:
      'send the write key as the HTTP Basic auth user name, or as "writeKey" in the body: the key of a source (eventwire sources list).',
    wrongHint: 'no source has that write key: use the key of a source (eventwire sources list).',
  }
}

async function serve(options: ServeOptions): Promise<ExitCode> {
  // A service, not a tool: it reconnects for as long as it runs, and waits for Redis rather than fail a call at once.
  const { retryStrategy: _once, ...reached } = connectionOf(options.redis)
  const service = { ...reached, maxRetriesPerRequest: null }
  let bullmq: Awaited<ReturnType<typeof loadBullmq>>
  try {
    bullmq = await loadBullmq()
  } catch (error) {
    process.stderr.write(`error: ${(error as Error).message}\n`)
    return EXIT.failed
  }
  const checkSource = bullmq.WebhookSources.check
  const config = options.config === undefined ? undefined : readConfig(options.config, checkSource)
  const location = { name: options.name, prefix: options.prefix }
  const durability = options.durability as 'strict' | 'best-effort'
  const queue = new bullmq.WebhookQueue({ connection: service, ...location, durability })
  // The queue and the worker of one process warn of the same Redis in the same words, and each of
  // their connections reports the same error every second while Redis is down: once a window is enough.
  const repeats = { warn: new Repeats(REPEATS_WINDOW_MS), error: new Repeats(REPEATS_WINDOW_MS) }
  const said = (level: 'warn' | 'error') => (detail: Error | string) => {
    const message = inServeWords(typeof detail === 'string' ? detail : detail.message)
    if (repeats[level].take(message)) log({ level, event: level, message })
  }
  const repeated = setInterval(() => {
    for (const level of ['warn', 'error'] as const)
      for (const { kind, held } of repeats[level].unreported())
        log({ level, event: level, message: kind, repeated: held })
  }, REPEATS_WINDOW_MS)
  repeated.unref()
  queue.on('warning', said('warn'))
  queue.on('error', said('error'))
  let worker: WebhookWorker | undefined
  let stopping = false
  let server: ReturnType<typeof createServeServer> | undefined
  let metrics: ServeMetrics | undefined
  /** What a start that failed leaves: nothing running. */
  const abandon = async () => {
    metrics?.stop()
    if (metrics?.server.listening) await closeServer(metrics.server, 1_000)
    await Promise.all([worker?.close({ timeout: 1_000 }), queue.close()]).catch(() => undefined)
  }
  try {
    await queue.ready()
    if (config !== undefined) log({ event: 'seeded', ...seedEntry(await seed(queue, config)) })
    if (options.role !== 'ingest') {
      worker = new bullmq.WebhookWorker(
        {},
        {
          connection: service,
          ...location,
          durability,
          ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
          // A dead worker's deliveries are taken back once its lock lapses, found at the next check.
          ...(options.lockDuration === undefined
            ? {}
            : { lockDuration: options.lockDuration, stalledInterval: options.lockDuration }),
        },
      )
      worker.on('warning', said('warn'))
      worker.on('error', said('error'))
      worker.on('alert', (alert) => log(alertEntry(alert)))
      await worker.ready()
    }
    if (options.metricsPort !== undefined) {
      metrics = await createServeMetrics(queue, worker)
      const url = await startServer(
        metrics.server,
        'serve',
        { host: options.host, port: options.metricsPort },
        cannotListen,
      )
      if (url === undefined) {
        await abandon()
        return EXIT.failed
      }
      log({ event: 'metrics', url: `${url}/metrics` })
    }
    if (options.role !== 'worker') {
      const rates = new SourceRates(options.rateLimit)
      server = createServeServer(
        {
          keys: registryKeys(queue),
          admit: (source) => rates.admit(source),
          unreported: () => rates.unreported(),
          store: storeFor(queue),
          // Not ready once stopping: a load balancer takes the process out while it drains.
          ready: async () => {
            if (stopping) return false
            try {
              await queue.ready()
              // Redis answers now: while it is down a probe says so within a second.
              return await answersWithin(queue.counts(), READY_PROBE_MS)
            } catch {
              return false
            }
          },
          log,
          measure: metrics?.measure,
        },
        options.maxConnections,
      )
      const url = await startServer(server, 'serve', options, cannotListen)
      if (url === undefined) {
        // cannotListen said why (a port in use, an address not here).
        await abandon()
        return EXIT.failed
      }
      const { sources } = await queue.sources.list()
      log({ event: 'listening', url, role: options.role, sources: sources.length })
      if (sources.length === 0)
        log({
          level: 'warn',
          event: 'no-sources',
          message:
            'the registry has no source, so every call is refused 401: add one with eventwire sources set, or --config',
        })
      // Every source read into this process now, not on the first request.
      await queue.sources.find('')
    } else log({ event: 'working', role: options.role })
  } catch (error) {
    await abandon()
    // A config that names a destination the registry lacks: exit 2, as any wrong input.
    if (error instanceof UsageError || !(error instanceof Error)) throw error
    log({ level: 'error', event: 'start-failed', message: inServeWords(error.message) })
    return EXIT.failed
  }
  // SIGHUP: the config file again, written into the registry. One it cannot use writes nothing.
  const reload = () => {
    const path = options.config
    if (path === undefined) {
      log({ event: 'reload-skipped', message: 'no --config to read again: the registry is read as it changes' })
      return
    }
    void (async () => {
      try {
        const next = readConfig(path, checkSource)
        log({ event: 'reloaded', ...seedEntry(await seed(queue, next)) })
      } catch (error) {
        log({
          level: 'error',
          event: 'reload-failed',
          message: withoutCredentials(error instanceof Error ? error.message : String(error)),
        })
      }
    })()
  }
  process.on('SIGHUP', reload)
  const signal = await untilStopped()
  process.off('SIGHUP', reload)
  stopping = true
  log({ event: 'stopping', signal })
  // First no new calls; then the deliveries in flight end or go back to Redis for another worker.
  if (server !== undefined) await closeServer(server, options.drainTimeout)
  await worker?.close({ timeout: options.drainTimeout })
  // Metrics are scraped until the work is done.
  metrics?.stop()
  if (metrics !== undefined) await closeServer(metrics.server, 1_000)
  await queue.close()
  clearInterval(repeated)
  log({ event: 'stopped' })
  return EXIT.ok
}

/** `eventwire serve`: the platform, in production: the ingest API and the delivery workers on one Redis. */
export const serveCommand: Command = defineCommand({
  name: 'serve',
  summary: 'run the platform: the ingest API and the webhook workers, on Redis',
  description:
    "Takes the platform's clients' calls (POST /v1/batch and /v1/<type>, the write key as HTTP Basic user or in the body), " +
    'answers 200 once Redis holds every event, and delivers each to the destinations of its source as signed webhooks. ' +
    'Sources and destinations are those of the registry in Redis (eventwire sources, eventwire destinations); --config writes a file of them into it. ' +
    'Run one process with --role all, or ingest and worker processes apart; all share Redis and nothing else. ' +
    'GET /healthz says the process is up, GET /readyz that it takes events. Logs are JSON lines on stdout. See docs/serve.md.',
  options: OPTIONS,
  epilog:
    'Exit codes: 0 stopped by SIGTERM or SIGINT, 1 Redis failed or the port was taken, 2 bad command line or config.\n\nExamples:\n' +
    '  $ eventwire serve --config platform.json --redis redis://127.0.0.1:6379\n' +
    '  $ eventwire serve --config platform.json --role ingest --host 0.0.0.0 --port 8080\n' +
    '  $ eventwire serve --config platform.json --role worker --concurrency 100',
  run: serve,
})
