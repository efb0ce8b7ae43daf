import { OptionsError } from '../../core/errors/options-error.js'
import { checkOptionNames, integerOption } from '../../core/option-checks.js'
import { setUnrefTimeout } from '../../core/timers.js'
import { isObject } from '../../core/validate.js'
import { causeText } from '../delivery/failure.js'
import type { AttemptNotice } from '../delivery/result.js'
import { destinationKey } from './destination-registry.js'
import { REDIS_NOW } from './redis-now.js'

// Each destination's attempts, in a Redis stream beside the queue's keys (in its hash slot): one
// entry per request, trimmed to the newest `maxEntries` and to `maxAgeMs` of Redis's time, the
// key itself expiring `maxAgeMs` after its last write so that a destination gone quiet leaves
// nothing behind. Workers write; `WebhookQueue.attempts()` reads (logged-attempt.ts). The log is
// for people: it is written a moment after the attempts, in one command for many, and a worker
// killed in between loses that moment's entries, never an event.

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

/** Two hundred attempts a destination, for a week: about 35 KB of Redis for each busy destination (bench/README.md), and what an operator looks back through after a customer's "we got nothing". */
export const ATTEMPT_LOG_DEFAULTS: ResolvedAttemptLog = { maxEntries: 200, maxAgeMs: 7 * 24 * 3_600_000 }

/** How long attempts wait in the worker before they are written: many in one command. */
export const ATTEMPT_LOG_FLUSH_MS = 100

/** Most entries one command writes; more are written in several. */
const ENTRIES_PER_WRITE = 500

/**
 * Most entries a worker holds while Redis is slow to take them: beyond, new ones are dropped and
 * counted (the log must not cost the worker its memory).
 */
export const MAX_UNWRITTEN_ATTEMPTS = 10_000

/**
 * KEYS: streams. ARGV[1]: most entries kept; ARGV[2]: longest age in ms; then, for each key, its
 * number of entries and, for each, its 8 values. Stream ids are Redis's time, so the age is too.
 */
const WRITE = `${REDIS_NOW}
local keep, age = ARGV[1], tonumber(ARGV[2])
local at = 3
for k = 1, #KEYS do
  local key = KEYS[k]
  for _ = 1, tonumber(ARGV[at]) do
    redis.call('XADD', key, '*', 't', ARGV[at + 1], 'e', ARGV[at + 2], 'u', ARGV[at + 3], 'n', ARGV[at + 4],
      's', ARGV[at + 5], 'c', ARGV[at + 6], 'x', ARGV[at + 7], 'd', ARGV[at + 8])
    at = at + 8
  end
  at = at + 1
  redis.call('XTRIM', key, 'MAXLEN', keep)
  redis.call('XTRIM', key, 'MINID', now - age)
  redis.call('PEXPIRE', key, age)
end
return #KEYS
`

/** The name the script is defined under on the worker's connection. */
const WRITE_COMMAND = 'eventwireAttemptLog'

/** What the log is written with: BullMQ's ioredis connection. */
export interface AttemptLogStore {
  defineCommand(name: string, definition: { lua: string }): void
  [WRITE_COMMAND]?: (keys: number, ...keysThenArgs: Array<string | number>) => Promise<unknown>
}

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

/** One attempt waiting to be written: its stream and its values in the stream's field order. */
interface Unwritten {
  readonly key: string
  readonly values: readonly (string | number)[]
}

/** Where the log reports: attempts dropped while Redis was slow, and failed writes. */
export interface AttemptLogHooks {
  failed(error: Error): void
  /** Attempts dropped because {@link MAX_UNWRITTEN_ATTEMPTS} were waiting to be written. */
  dropped(count: number): void
}

/**
 * A worker's side of the attempt log: gathers the attempts of its rounds and writes them every
 * {@link ATTEMPT_LOG_FLUSH_MS}, many in one command. Nothing here delays a delivery: a write that
 * fails is reported, and its entries are gone.
 */
export class AttemptLog {
  readonly #keys: string
  readonly #limits: ResolvedAttemptLog
  readonly #store: () => Promise<AttemptLogStore>
  readonly #hooks: AttemptLogHooks
  #unwritten: Unwritten[] = []
  #dropped = 0
  #timer: ReturnType<typeof setTimeout> | undefined
  /** The write under way, if any: one at a time, in order. */
  #writing: Promise<void> = Promise.resolve()

  /** @param keys - The queue's keys, `<prefix>:<name>`. */
  constructor(keys: string, limits: ResolvedAttemptLog, store: () => Promise<AttemptLogStore>, hooks: AttemptLogHooks) {
    this.#keys = keys
    this.#limits = limits
    this.#store = store
    this.#hooks = hooks
  }

  /**
   * Notes one attempt of an event of `destination` (`undefined`: the worker's own `webhooks`),
   * answered now, `at` being Redis's time now.
   */
  record(destination: string | undefined, notice: AttemptNotice, now: number): void {
    if (this.#unwritten.length >= MAX_UNWRITTEN_ATTEMPTS) {
      this.#dropped++
      return
    }
    const durationMs = notice.durationMs ?? 0
    const error = notice.error
    this.#unwritten.push({
      key: destinationKey(this.#keys, 'attempts', destination),
      values: [
        Math.round(now - durationMs),
        notice.eventId,
        notice.url,
        notice.attempts,
        notice.status ?? '',
        notice.accepted ? '' : (error?.code ?? 'ERR_NETWORK'),
        error === undefined || notice.accepted ? '' : causeText(error),
        Math.round(durationMs * 10) / 10,
      ],
    })
    if (this.#unwritten.length >= ENTRIES_PER_WRITE) this.#writeSoon(0)
    else this.#writeSoon(ATTEMPT_LOG_FLUSH_MS)
  }

  /** Writes what is gathered now, and resolves once every write so far is done (or failed). */
  flush(): Promise<void> {
    clearTimeout(this.#timer)
    this.#timer = undefined
    this.#write()
    return this.#writing
  }

  #writeSoon(ms: number): void {
    if (this.#timer !== undefined && ms > 0) return
    clearTimeout(this.#timer)
    this.#timer = setUnrefTimeout(() => {
      this.#timer = undefined
      this.#write()
    }, ms)
  }

  #write(): void {
    if (this.#dropped > 0) {
      this.#hooks.dropped(this.#dropped)
      this.#dropped = 0
    }
    while (this.#unwritten.length > 0) {
      const batch = this.#unwritten.splice(0, ENTRIES_PER_WRITE)
      this.#writing = this.#writing.then(() => this.#send(batch))
    }
  }

  async #send(batch: readonly Unwritten[]): Promise<void> {
    // By stream, each stream's entries in the order they were answered.
    const byKey = new Map<string, (string | number)[][]>()
    for (const { key, values } of batch) {
      const entries = byKey.get(key)
      if (entries === undefined) byKey.set(key, [values as (string | number)[]])
      else entries.push(values as (string | number)[])
    }
    const keys = [...byKey.keys()]
    const args: (string | number)[] = [this.#limits.maxEntries, this.#limits.maxAgeMs]
    for (const entries of byKey.values()) {
      args.push(entries.length)
      for (const values of entries) args.push(...values)
    }
    try {
      const store = await this.#store()
      if (store[WRITE_COMMAND] === undefined) store.defineCommand(WRITE_COMMAND, { lua: WRITE })
      await (store[WRITE_COMMAND] as NonNullable<AttemptLogStore[typeof WRITE_COMMAND]>)(keys.length, ...keys, ...args)
    } catch (error) {
      this.#hooks.failed(error as Error)
    }
  }
}
