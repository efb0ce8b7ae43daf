import { OptionsError } from '../../core/errors/options-error.js'
import { checkOptionNames, integerOption } from '../../core/option-checks.js'
import { isObject } from '../../core/validate.js'
import { causeText } from '../delivery/failure.js'
import type { AttemptNotice } from '../delivery/result.js'
import { PACKED_FIELD } from './logged-attempt.js'
import { destinationKey } from './registry.js'
import { StreamWriter, type StreamSpec, type StreamStore, type StreamWriterHooks } from './stream-writer.js'

// Each destination's attempts, in a Redis stream beside the queue's keys: one entry per request,
// bounded by count and by age (stream-writer.ts). Workers write; `WebhookQueue.attempts()` reads
// (logged-attempt.ts). The log is for people: it is written a moment after the attempts, in one
// command for many, and a worker killed in between loses that moment's entries, never an event.

/** The `attemptLog` option of `WebhookWorkerOptions`. */
export interface AttemptLogOptions {
  /** Attempts kept per destination, newest first. @defaultValue 200 */
  maxEntries?: number | undefined
  /** How long an attempt is kept, in ms of Redis's clock. @defaultValue 604_800_000 (7 days) */
  maxAgeMs?: number | undefined
}

/** {@link AttemptLogOptions} with defaults filled in. */
export interface ResolvedAttemptLog {
  readonly maxEntries: number
  readonly maxAgeMs: number
}

/** Two hundred attempts a destination, for a week: about 38 KB of Redis for each busy destination (bench/README.md), and what an operator looks back through after a customer's "we got nothing". */
export const ATTEMPT_LOG_DEFAULTS: ResolvedAttemptLog = { maxEntries: 200, maxAgeMs: 7 * 24 * 3_600_000 }

/** How long attempts wait in the worker before they are written: many in one command. */
export const ATTEMPT_LOG_FLUSH_MS = 100

/**
 * Most entries a worker holds while Redis is slow to take them: beyond, new ones are dropped and
 * counted (the log must not cost the worker its memory).
 */
export const MAX_UNWRITTEN_ATTEMPTS = 10_000

/**
 * The log's entries: one field, `a`, a JSON array of sent-at, event id, URL, attempt number,
 * status, code, error text and duration. One value rather than a field each halves what Redis
 * spends on an entry (bench/README.md); logged-attempt.ts reads both forms.
 */
const ATTEMPT_STREAM: StreamSpec = {
  command: 'eventwireAttemptLog',
  fields: [PACKED_FIELD],
  flushMs: ATTEMPT_LOG_FLUSH_MS,
  entriesPerWrite: 500,
  // An entry is a few hundred characters at most: the count bounds a write first.
  charsPerWrite: Number.POSITIVE_INFINITY,
  maxUnwritten: MAX_UNWRITTEN_ATTEMPTS,
  maxUnwrittenChars: Number.POSITIVE_INFINITY,
}

/** What the log is written with: BullMQ's ioredis connection. */
export type AttemptLogStore = StreamStore

/**
 * Checks the `attemptLog` worker option.
 *
 * @returns `undefined` for `false`: no log.
 * @throws {@link OptionsError} naming the field it cannot use.
 */
export function resolveAttemptLog(value: unknown): ResolvedAttemptLog | undefined {
  if (value === undefined) return ATTEMPT_LOG_DEFAULTS
  if (value === false) return undefined
  if (!isObject(value)) throw new OptionsError('attemptLog', 'expected { maxEntries?, maxAgeMs? }, or false for none.')
  checkOptionNames(
    value,
    { maxEntries: true, maxAgeMs: true },
    { maxCount: 'maxEntries', count: 'maxEntries' },
    'attemptLog.',
  )
  return {
    maxEntries: integerOption(
      'attemptLog.maxEntries',
      value['maxEntries'],
      ATTEMPT_LOG_DEFAULTS.maxEntries,
      1,
      1_000_000,
    ),
    maxAgeMs: integerOption('attemptLog.maxAgeMs', value['maxAgeMs'], ATTEMPT_LOG_DEFAULTS.maxAgeMs, 1_000),
  }
}

/** Where the log reports: attempts dropped while Redis was slow, and failed writes. */
export type AttemptLogHooks = StreamWriterHooks

/**
 * A worker's side of the attempt log: gathers the attempts of its rounds and writes them every
 * {@link ATTEMPT_LOG_FLUSH_MS}, many in one command (stream-writer.ts).
 */
export class AttemptLog {
  readonly #keys: string
  readonly #writer: StreamWriter

  /** @param keys - The queue's keys, `<prefix>:<name>`. */
  constructor(keys: string, limits: ResolvedAttemptLog, store: () => Promise<AttemptLogStore>, hooks: AttemptLogHooks) {
    this.#keys = keys
    this.#writer = new StreamWriter(ATTEMPT_STREAM, limits, store, hooks)
  }

  /**
   * Notes one attempt of an event of `destination` (`undefined`: the worker's own `webhooks`),
   * answered now, `at` being Redis's time now.
   */
  record(destination: string | undefined, notice: AttemptNotice, now: number): void {
    const durationMs = notice.durationMs ?? 0
    const error = notice.error
    this.#writer.add(destinationKey(this.#keys, 'attempts', destination), [
      JSON.stringify([
        Math.round(now - durationMs),
        notice.eventId,
        notice.url,
        notice.attempts,
        notice.status ?? '',
        notice.accepted ? '' : (error?.code ?? 'ERR_NETWORK'),
        error === undefined || notice.accepted ? '' : causeText(error),
        Math.round(durationMs * 10) / 10,
      ]),
    ])
  }

  /** Writes what is gathered now, and resolves once every write so far is done (or failed). */
  flush(): Promise<void> {
    return this.#writer.flush()
  }
}
