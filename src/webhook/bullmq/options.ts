import type { ConnectionOptions } from 'bullmq'
import { OptionsError } from '../../core/errors/options-error.js'
import { checkOptionNames, integerOption, timeoutOption } from '../../core/option-checks.js'
import { MAX_TIMER_MS } from '../../core/timers.js'
import { isObject } from '../../core/validate.js'
import { hashTagOf } from './cluster-slot.js'
import { durabilityOption, type Durability } from './durability.js'
import type { WaitForReplicas } from './replica-ack.js'
import type { WebhookQueueOptions } from './queue-options.js'
import { resolveAttemptLog, type ResolvedAttemptLog } from './attempt-log.js'
import { resolveAlerts, type ResolvedAlerts } from './delivery-alerts.js'
import { resolveKeepSent, type ResolvedKeepSent } from './sent-bodies.js'

// WebhookQueue and WebhookWorker options are checked here, as the destination's settings are in
// settings.ts: at construction, each wrong value an OptionsError naming its option, instead of a
// BullMQ error later (or a queue nobody else reads, for a misspelt name).

/** The queue name producers and workers agree on by default. */
export const DEFAULT_QUEUE_NAME = 'eventwire-webhooks'

/** BullMQ's own default key prefix, given explicitly. */
const DEFAULT_PREFIX = 'bull'

/** Which queue in which Redis, and what Redis must keep: what producers and workers both name. */
export interface ResolvedQueueLocation {
  readonly connection: ConnectionOptions
  readonly name: string
  readonly prefix: string
  readonly durability: Durability
}

/** {@link WebhookQueueOptions} with defaults filled in. */
export interface ResolvedQueueOptions extends ResolvedQueueLocation {
  readonly enqueueTimeout: number
  /** How long, in ms, and how many dead letters Redis keeps. */
  readonly deadLetters: { readonly maxAgeMs: number; readonly maxCount: number }
  /** How long Redis remembers an event id once delivered, in ms; 0 for no longer than its job. */
  readonly dedupWindowMs: number
  /** Replicas that must confirm each enqueued event; `undefined`: the primary's acknowledgement is enough. */
  readonly waitForReplicas: WaitForReplicas | undefined
}

/** A week of dead letters, and at most 100,000 of them (some 2 KB of Redis each). */
export const DEAD_LETTER_DEFAULTS = { maxAgeMs: 7 * 24 * 3_600_000, maxCount: 100_000 } as const

/**
 * BullMQ's `removeOnFail` for a `deadLetters` setting: its age in seconds. Workers apply it for the
 * defaults; a job carries its own only when its producer's setting differs.
 */
export function keepDeadLetters(deadLetters: ResolvedQueueOptions['deadLetters']): { age: number; count: number } {
  return { age: Math.ceil(deadLetters.maxAgeMs / 1000), count: deadLetters.maxCount }
}

/** A day: what ingest APIs in this field keep a message id for, and well over the default retry window of 4 hours. */
export const DEFAULT_DEDUP_WINDOW_MS = 24 * 3_600_000

/** `WebhookWorkerOptions` (worker.ts) with defaults filled in. */
export interface ResolvedWorkerOptions extends ResolvedQueueLocation {
  readonly concurrency: number
  readonly lockDuration: number
  readonly stalledInterval: number
  /** Where each attempt is logged and for how long; `undefined`: not logged. */
  readonly attemptLog: ResolvedAttemptLog | undefined
  /** What is kept of delivered events for `WebhookQueue.replay()`; `undefined`: nothing. */
  readonly keepSent: ResolvedKeepSent | undefined
  /** When URLs that keep failing are told about, and whether destinations are disabled; `undefined`: never. */
  readonly alerts: ResolvedAlerts | undefined
}

/** Every option of each class; a key missing here fails to compile. */
const QUEUE_OPTION_NAMES: Readonly<Record<keyof WebhookQueueOptions, true>> = {
  connection: true,
  name: true,
  prefix: true,
  durability: true,
  enqueueTimeout: true,
  deadLetters: true,
  dedupWindowMs: true,
  waitForReplicas: true,
}
/**
 * worker.ts imports this file, so the keys are held to `WebhookWorkerOptions` by a type check in
 * test/webhook/bullmq-options.test.ts instead of here: a key missing, or one too many, still fails
 * `npm run typecheck`.
 */
export const WORKER_OPTION_NAMES = {
  connection: true,
  name: true,
  prefix: true,
  concurrency: true,
  lockDuration: true,
  stalledInterval: true,
  durability: true,
  attemptLog: true,
  keepSent: true,
  alerts: true,
} as const satisfies Readonly<Record<string, true>>
/** Names people reach for (BullMQ's and ioredis's among them), mapped to ours. */
const LIKELY_NAMES: Readonly<Record<string, string>> = {
  queueName: 'name',
  queue: 'name',
  redis: 'connection',
  keyPrefix: 'prefix',
}

function shown(value: unknown): string {
  return JSON.stringify(value) ?? String(value)
}

/** A non-empty string option, or `fallback` when not given. */
function nameOption(option: string, value: unknown, fallback: string): string {
  if (value === undefined) return fallback
  if (typeof value !== 'string' || value === '')
    throw new OptionsError(option, `expected a non-empty string, got ${shown(value)}.`)
  return value
}

function location(options: Record<string, unknown>): ResolvedQueueLocation {
  const connection = options['connection']
  if (!isObject(connection))
    throw new OptionsError('connection', 'expected ioredis options or an ioredis instance, as BullMQ takes them.')
  const name = nameOption('name', options['name'], DEFAULT_QUEUE_NAME)
  // BullMQ joins the prefix, the name and the job id with `:`: a name with one would read as another queue's keys.
  if (name.includes(':')) throw new OptionsError('name', `a queue name cannot contain ':', got ${shown(name)}.`)
  const prefix = nameOption('prefix', options['prefix'], DEFAULT_PREFIX)
  // On a Redis Cluster every key of a queue must hash to one slot, or BullMQ's scripts fail with
  // CROSSSLOT (and enqueue() used to wait for its timeout, blaming Redis). A hash tag in the prefix
  // does it: Redis hashes only what is between the first `{` and the next `}`.
  if ((connection as { isCluster?: unknown }).isCluster === true && hashTagOf(prefix) === undefined) {
    throw new OptionsError(
      'prefix',
      `on a Redis Cluster every key of a queue must be in one slot: give a hash-tagged prefix such as ${shown(`{${prefix.replace(/[{}]/g, '') || 'eventwire'}}`)} (the same in every producer and worker), got ${shown(prefix)}.`,
    )
  }
  return {
    connection: connection as ConnectionOptions,
    name,
    prefix,
    durability: durabilityOption(options['durability']),
  }
}

/** The `deadLetters` option: how long and how many dead letters Redis keeps. */
function deadLettersOption(value: unknown): ResolvedQueueOptions['deadLetters'] {
  if (value === undefined) return DEAD_LETTER_DEFAULTS
  if (!isObject(value)) throw new OptionsError('deadLetters', 'expected { maxAgeMs?, maxCount? }.')
  checkOptionNames(value, { maxAgeMs: true, maxCount: true }, {}, 'deadLetters.')
  return {
    maxAgeMs: integerOption('deadLetters.maxAgeMs', value['maxAgeMs'], DEAD_LETTER_DEFAULTS.maxAgeMs, 1_000),
    maxCount: integerOption('deadLetters.maxCount', value['maxCount'], DEAD_LETTER_DEFAULTS.maxCount, 1),
  }
}

/** How long the primary waits for replicas by default (ms): far above a healthy replica's lag, far below enqueueTimeout. */
export const REPLICA_WAIT_DEFAULT_MS = 1_000

/** The `waitForReplicas` option, which must give up before `enqueueTimeout` does. */
function waitForReplicasOption(value: unknown, enqueueTimeout: number): WaitForReplicas | undefined {
  if (value === undefined) return undefined
  if (!isObject(value)) throw new OptionsError('waitForReplicas', 'expected { count, timeoutMs? }.')
  checkOptionNames(
    value,
    { count: true, timeoutMs: true },
    { replicas: 'count', timeout: 'timeoutMs' },
    'waitForReplicas.',
  )
  if (value['count'] === undefined)
    throw new OptionsError('waitForReplicas.count', 'expected how many replicas must confirm each event, 1 or more.')
  const count = integerOption('waitForReplicas.count', value['count'], 1, 1)
  const timeoutMs = integerOption('waitForReplicas.timeoutMs', value['timeoutMs'], REPLICA_WAIT_DEFAULT_MS, 1)
  if (timeoutMs >= enqueueTimeout) {
    throw new OptionsError(
      'waitForReplicas.timeoutMs',
      `must be less than enqueueTimeout (${enqueueTimeout} ms), or enqueue() would time out before it could say that the replicas did not confirm; got ${timeoutMs}.`,
    )
  }
  return { count, timeoutMs }
}

/**
 * Checks {@link WebhookQueueOptions} and fills in defaults.
 *
 * @throws {@link OptionsError} naming the first option it cannot use.
 */
export function resolveQueueOptions(options: unknown): ResolvedQueueOptions {
  if (!isObject(options)) throw new OptionsError('options', 'expected an object with `connection`.')
  checkOptionNames(options, QUEUE_OPTION_NAMES, {
    ...LIKELY_NAMES,
    timeout: 'enqueueTimeout',
    replicas: 'waitForReplicas',
  })
  const enqueueTimeout = timeoutOption('enqueueTimeout', options['enqueueTimeout'], 10_000)
  return {
    ...location(options),
    enqueueTimeout,
    deadLetters: deadLettersOption(options['deadLetters']),
    dedupWindowMs: integerOption('dedupWindowMs', options['dedupWindowMs'], DEFAULT_DEDUP_WINDOW_MS, 0),
    waitForReplicas: waitForReplicasOption(options['waitForReplicas'], enqueueTimeout),
  }
}

/**
 * Checks `WebhookWorkerOptions` (worker.ts) and fills in defaults (BullMQ's own, for the lock and
 * the stalled check).
 *
 * @throws {@link OptionsError} naming the first option it cannot use.
 */
export function resolveWorkerOptions(options: unknown): ResolvedWorkerOptions {
  if (!isObject(options)) throw new OptionsError('options', 'expected an object with `connection`.')
  checkOptionNames(options, WORKER_OPTION_NAMES, LIKELY_NAMES)
  return {
    ...location(options),
    concurrency: integerOption('concurrency', options['concurrency'], 50, 1),
    lockDuration: integerOption('lockDuration', options['lockDuration'], 30_000, 1, MAX_TIMER_MS),
    stalledInterval: integerOption('stalledInterval', options['stalledInterval'], 30_000, 1, MAX_TIMER_MS),
    attemptLog: resolveAttemptLog(options['attemptLog']),
    keepSent: resolveKeepSent(options['keepSent']),
    alerts: resolveAlerts(options['alerts']),
  }
}
