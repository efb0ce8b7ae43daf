import { OptionsError } from '../../core/errors/options-error.js'
import { checkOptionNames, integerOption } from '../../core/option-checks.js'
import { isObject } from '../../core/validate.js'
import { destinationKey } from './registry.js'
import { StreamWriter, type StreamSpec, type StreamStore, type StreamWriterHooks } from './stream-writer.js'

// What each destination was sent, kept for a while so that it can be sent again
// (`WebhookQueue.replay()`): a Redis stream per destination of the delivered events' ids and
// bodies, bounded by count and by age (stream-writer.ts). Off unless a worker is given
// `keepSent`: bodies cost Redis their size. Written a moment after delivery, in one command for
// many: a worker killed in between loses that moment's copies, never an event.

/** The `keepSent` option of `WebhookWorkerOptions`. */
export interface KeepSentOptions {
  /** Delivered events kept per destination, newest first. @defaultValue 1000 */
  maxEntries?: number | undefined
  /** How long a delivered event is kept, in ms of Redis's clock. @defaultValue 86_400_000 (a day) */
  maxAgeMs?: number | undefined
}

/** {@link KeepSentOptions} with defaults filled in. */
export interface ResolvedKeepSent {
  readonly maxEntries: number
  readonly maxAgeMs: number
}

/** A thousand events a destination, for a day: what a customer's "resend this morning's" asks for, at about a thousand times the body size of Redis per busy destination. */
export const KEEP_SENT_DEFAULTS: ResolvedKeepSent = { maxEntries: 1_000, maxAgeMs: 24 * 3_600_000 }

/** Most events a destination may keep: a replay reads them all, and remembers each id once. */
export const MAX_KEPT_PER_DESTINATION = 100_000

/** Most characters of bodies a worker holds while Redis is slow to take them (about 16 to 32 MB). */
export const MAX_UNWRITTEN_BODY_CHARS = 16_000_000

/** How long delivered events wait in the worker before they are kept: many in one command. */
export const KEEP_SENT_FLUSH_MS = 100

/** The kept events' entries: the event id and its body as it was sent. */
const SENT_STREAM: StreamSpec = {
  command: 'eventwireKeepSent',
  fields: ['e', 'b'],
  flushMs: KEEP_SENT_FLUSH_MS,
  entriesPerWrite: 500,
  // A write of up to a megabyte: large bodies go in several commands, so none holds Redis long.
  charsPerWrite: 1_000_000,
  maxUnwritten: 10_000,
  maxUnwrittenChars: MAX_UNWRITTEN_BODY_CHARS,
}

/**
 * Checks the `keepSent` worker option.
 *
 * @returns `undefined` for `false` or nothing: no bodies kept; the defaults for `true`.
 * @throws {@link OptionsError} naming the field it cannot use.
 */
export function resolveKeepSent(value: unknown): ResolvedKeepSent | undefined {
  if (value === undefined || value === false) return undefined
  if (value === true) return KEEP_SENT_DEFAULTS
  if (!isObject(value))
    throw new OptionsError('keepSent', 'expected { maxEntries?, maxAgeMs? }, true for the defaults, or false for none.')
  checkOptionNames(
    value,
    { maxEntries: true, maxAgeMs: true },
    { maxCount: 'maxEntries', count: 'maxEntries', retentionMs: 'maxAgeMs' },
    'keepSent.',
  )
  return {
    maxEntries: integerOption(
      'keepSent.maxEntries',
      value['maxEntries'],
      KEEP_SENT_DEFAULTS.maxEntries,
      1,
      MAX_KEPT_PER_DESTINATION,
    ),
    maxAgeMs: integerOption('keepSent.maxAgeMs', value['maxAgeMs'], KEEP_SENT_DEFAULTS.maxAgeMs, 1_000),
  }
}

/**
 * A worker's side of what is kept for replay: gathers its delivered events and writes them, many
 * in one command (stream-writer.ts). Events past its bound while Redis is slow are not kept, and
 * told as dropped.
 */
export class SentBodies {
  readonly #keys: string
  readonly #writer: StreamWriter

  /** @param keys - The queue's keys, `<prefix>:<name>`. */
  constructor(keys: string, bounds: ResolvedKeepSent, store: () => Promise<StreamStore>, hooks: StreamWriterHooks) {
    this.#keys = keys
    this.#writer = new StreamWriter(SENT_STREAM, bounds, store, hooks)
  }

  /** Keeps an event of `destination` (`undefined`: the worker's own `webhooks`) delivered now. */
  record(destination: string | undefined, eventId: string, body: string): void {
    this.#writer.add(destinationKey(this.#keys, 'sent', destination), [eventId, body], body.length)
  }

  /** Writes what is gathered now, and resolves once every write so far is done (or failed). */
  flush(): Promise<void> {
    return this.#writer.flush()
  }
}
