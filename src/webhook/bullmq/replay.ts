import { OptionsError } from '../../core/errors/options-error.js'
import { checkOptionNames, integerOption } from '../../core/option-checks.js'
import { isObject } from '../../core/validate.js'
import { checkDestinationId } from '../delivery/destination-record.js'
import { destinationKey } from './registry.js'

// The reading side of what workers keep of delivered events (sent-bodies.ts writes it): a
// destination's stream, read oldest first within a time window, a page at a time. Whatever has
// Redis access can write there too, so an entry that does not read as an event is left out.

/** Options of `WebhookQueue.replay()`. */
export interface ReplayOptions {
  /** Whose events: a registry's destination id; without it, those of the workers' own `webhooks`. */
  destination?: string | undefined
  /** Events delivered at or after this time (epoch ms, Redis's clock). */
  since: number
  /** Events delivered at or before this time (epoch ms). @defaultValue now */
  until?: number | undefined
}

/** What `WebhookQueue.replay()` did with the events kept for its window. */
export interface ReplayResult {
  /** Events kept for the window: each once, however often it was delivered in it. */
  readonly found: number
  /** Stored again, with their id and body: workers deliver them as any event, signed anew. */
  readonly queued: number
  /** Not stored: an event of the same id waits or is being delivered, and that delivery goes on. */
  readonly inFlight: number
  /** Not stored: an event of the same id is a dead letter. Re-drive it (`redrive()`) to send it. */
  readonly deadLetters: number
  /** Not stored: the destination is disabled. Enable it and replay again. */
  readonly disabled: number
}

/** {@link ReplayOptions}, checked. */
export interface ReplayRange {
  readonly destination: string | undefined
  readonly since: number
  readonly until: number | undefined
}

/** One kept event: its id and its body as it was sent. */
export interface SentEvent {
  readonly eventId: string
  readonly body: string
}

/** Entries read per command. */
export const REPLAY_PAGE = 1_000

/** What the kept events are read with: ioredis's `xrange`. */
export interface SentReadStore {
  xrange(
    key: string,
    start: string,
    end: string,
    count: 'COUNT',
    n: number,
  ): Promise<Array<[id: string, fields: string[]]>>
}

/**
 * Checks {@link ReplayOptions}.
 *
 * @throws {@link OptionsError} naming the option it cannot use.
 */
export function resolveReplayOptions(options: unknown): ReplayRange {
  if (!isObject(options))
    throw new OptionsError('options', 'expected { since, until?, destination? }: the window, in epoch ms.')
  checkOptionNames(
    options,
    { destination: true, since: true, until: true },
    { from: 'since', to: 'until', start: 'since', end: 'until' },
  )
  const destination = options['destination']
  if (destination !== undefined) checkDestinationId(destination)
  if (options['since'] === undefined)
    throw new OptionsError('since', 'expected the start of the window, in epoch ms (0 for all that is kept).')
  const since = integerOption('since', options['since'], 0, 0)
  const until = options['until'] === undefined ? undefined : integerOption('until', options['until'], 0, 0)
  if (until !== undefined && until < since)
    throw new OptionsError(
      'until',
      `is before \`since\` (${until} < ${since}): give a window that ends after it starts.`,
    )
  return { destination, since, until }
}

/** One entry as a kept event, or `undefined` when it does not read as one. */
export function readSentEntry(fields: readonly unknown[]): SentEvent | undefined {
  let eventId: unknown
  let body: unknown
  // Stryker disable next-line EqualityOperator,ArithmeticOperator: a trailing name without its value reads as undefined, which neither field takes.
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] === 'e') eventId = fields[i + 1]
    else if (fields[i] === 'b') body = fields[i + 1]
  }
  if (typeof eventId !== 'string' || eventId === '' || typeof body !== 'string') return undefined
  return { eventId, body }
}

/**
 * Reads the events kept for `range`, oldest first, and gives each page's events not given before
 * to `each` (an event delivered twice in the window is given once). Resolves with how many it gave.
 */
export async function eachSent(
  store: SentReadStore,
  keys: string,
  range: ReplayRange,
  each: (events: SentEvent[]) => Promise<void>,
): Promise<number> {
  const key = destinationKey(keys, 'sent', range.destination)
  let start = String(range.since)
  const end = range.until === undefined ? '+' : `${range.until}-18446744073709551615`
  const given = new Set<string>()
  for (;;) {
    const page = await store.xrange(key, start, end, 'COUNT', REPLAY_PAGE)
    const events: SentEvent[] = []
    for (const [, fields] of page) {
      const event = readSentEntry(fields)
      if (event === undefined || given.has(event.eventId)) continue
      given.add(event.eventId)
      events.push(event)
    }
    if (events.length > 0) await each(events)
    const last = page.at(-1)
    if (last === undefined || page.length < REPLAY_PAGE) return given.size
    start = `(${last[0]}`
  }
}
