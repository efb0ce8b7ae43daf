import { OptionsError } from '../../core/errors/options-error.js'
import { checkOptionNames, integerOption } from '../../core/option-checks.js'
import { isObject } from '../../core/validate.js'
import { causeText } from '../delivery/failure.js'
import { checkDestinationId } from '../delivery/destination-record.js'
import { destinationKey } from './registry.js'

// The reading side of the attempt log (attempt-log.ts writes it): a Redis stream per destination,
// newest last, each entry one request, its values packed in one field (or, as earlier versions
// wrote them, a field each). Whatever has Redis access can write there too, so each
// entry is read as untrusted: one that does not read as an attempt is left out.

/** One request to one URL, as the attempt log keeps it. */
export interface LoggedAttempt {
  /** When the request was sent, in epoch ms of Redis's clock. */
  readonly at: number
  readonly eventId: string
  /** The registry's destination; absent for events of the workers' own `webhooks`. */
  readonly destination?: string
  readonly url: string
  /** This URL's request number for the event: 1 for the first. */
  readonly attempt: number
  /** The receiver answered 2xx. */
  readonly accepted: boolean
  /** The HTTP status of the answer, when one came. */
  readonly status?: number
  /** Why the attempt failed (`ERR_HTTP_STATUS`, `ERR_TIMEOUT`, `ERR_NETWORK`, …), when it did. */
  readonly code?: string
  /** What the failure said, at most 200 characters, without control characters. */
  readonly error?: string
  /** How long the request took, in ms. */
  readonly durationMs: number
}

/** Options of `WebhookQueue.attempts()`. */
export interface AttemptsOptions {
  /** Whose attempts: a registry's destination id; without it, those of the workers' own `webhooks`. */
  destination?: string | undefined
  /** Only this event's attempts. */
  eventId?: string | undefined
  /** At most this many, newest first. @defaultValue 100 */
  limit?: number | undefined
  /** Only attempts logged at or after this time (epoch ms). */
  since?: number | undefined
  /** Only attempts logged at or before this time (epoch ms). */
  until?: number | undefined
}

/** The most `limit` may ask for. */
export const MAX_ATTEMPTS_READ = 10_000

/** Entries read per command while looking for one event's attempts. */
const PAGE = 1_000

/** What the log is read with: ioredis's `xrevrange`. */
export interface AttemptReadStore {
  xrevrange(
    key: string,
    end: string,
    start: string,
    count: 'COUNT',
    n: number,
  ): Promise<Array<[id: string, fields: string[]]>>
}

interface ReadRange {
  readonly destination: string | undefined
  readonly eventId: string | undefined
  readonly limit: number
  readonly since: number | undefined
  readonly until: number | undefined
}

function timeOption(name: string, value: unknown): number | undefined {
  return value === undefined ? undefined : integerOption(name, value, 0, 0)
}

/**
 * Checks {@link AttemptsOptions}.
 *
 * @throws {@link OptionsError} naming the option it cannot use.
 */
export function resolveAttemptsOptions(options: unknown): ReadRange {
  if (options === undefined) options = {}
  if (!isObject(options))
    throw new OptionsError('options', 'expected { destination?, eventId?, limit?, since?, until? }.')
  checkOptionNames(
    options,
    { destination: true, eventId: true, limit: true, since: true, until: true },
    { count: 'limit', from: 'since', to: 'until', messageId: 'eventId' },
  )
  const destination = options['destination']
  if (destination !== undefined) checkDestinationId(destination)
  const eventId = options['eventId']
  if (eventId !== undefined && (typeof eventId !== 'string' || eventId === ''))
    throw new OptionsError('eventId', 'expected the event id (its messageId), a non-empty string.')
  return {
    destination,
    eventId,
    limit: integerOption('limit', options['limit'], 100, 1, MAX_ATTEMPTS_READ),
    since: timeOption('since', options['since']),
    until: timeOption('until', options['until']),
  }
}

/**
 * Reads the attempts `range` asks for, newest first: one command without `eventId`, pages of
 * {@link PAGE} through the log with it.
 */
export async function readAttempts(store: AttemptReadStore, keys: string, range: ReadRange): Promise<LoggedAttempt[]> {
  const key = destinationKey(keys, 'attempts', range.destination)
  const start = range.since === undefined ? '-' : String(range.since)
  let end = range.until === undefined ? '+' : `${range.until}-18446744073709551615`
  const found: LoggedAttempt[] = []
  const count = range.eventId === undefined ? range.limit : PAGE
  for (;;) {
    const page = await store.xrevrange(key, end, start, 'COUNT', count)
    for (const [, fields] of page) {
      const attempt = readEntry(fields, range.destination)
      if (attempt === undefined || (range.eventId !== undefined && attempt.eventId !== range.eventId)) continue
      found.push(attempt)
      if (found.length === range.limit) return found
    }
    const last = page.at(-1)
    if (last === undefined || page.length < count) return found
    end = `(${last[0]}`
  }
}

const CODE = /^ERR_[A-Z_]{1,40}$/

/**
 * The field workers write an entry in: a JSON array of the values of {@link VALUE_NAMES}, in
 * their order. Earlier versions wrote each value in a field of its name; both read alike.
 */
export const PACKED_FIELD = 'a'

/** An entry's values: sent-at, event id, URL, attempt number, status, code, error text, duration. */
const VALUE_NAMES = ['t', 'e', 'u', 'n', 's', 'c', 'x', 'd'] as const

/** A packed entry's values by name, each a string as a field of its own holds it; `{}` when it is not one. */
function unpack(packed: unknown): Record<string, string> {
  let values: unknown
  try {
    values = JSON.parse(String(packed))
  } catch {
    // Not JSON: `values` stays undefined, which the next line refuses.
  }
  if (!Array.isArray(values) || values.length !== VALUE_NAMES.length) return {}
  const named: Record<string, string> = {}
  for (const [index, name] of VALUE_NAMES.entries()) {
    const value: unknown = values[index]
    if (typeof value !== 'string' && typeof value !== 'number') return {}
    named[name] = String(value)
  }
  return named
}

/** One entry as an attempt, or `undefined` when it does not read as one. */
export function readEntry(fields: readonly unknown[], destination: string | undefined): LoggedAttempt | undefined {
  let value: Record<string, unknown> = {}
  // Stryker disable next-line EqualityOperator,ArithmeticOperator: a trailing name without its value would be read as undefined, which no field takes.
  for (let i = 0; i + 1 < fields.length; i += 2) value[String(fields[i])] = fields[i + 1]
  if (PACKED_FIELD in value) value = unpack(value[PACKED_FIELD])
  const { t, e, u, n, s, c, x, d } = value
  if (typeof e !== 'string' || e === '' || typeof u !== 'string' || u === '') return undefined
  // A missing status reads as NaN, which the status check below refuses.
  if (typeof c !== 'string' || typeof x !== 'string') return undefined
  const at = Number(t)
  const attempt = Number(n)
  const durationMs = Number(d)
  const status = s === '' ? undefined : Number(s)
  if (!Number.isSafeInteger(at) || at < 0 || !Number.isSafeInteger(attempt) || attempt < 1) return undefined
  if (!Number.isFinite(durationMs) || durationMs < 0) return undefined
  if (status !== undefined && !(Number.isInteger(status) && status >= 100 && status <= 999)) return undefined
  if (c !== '' && !CODE.test(c)) return undefined
  const accepted = c === ''
  return {
    at,
    eventId: e,
    ...(destination === undefined ? {} : { destination }),
    url: u,
    attempt,
    accepted,
    ...(status === undefined ? {} : { status }),
    ...(accepted ? {} : { code: c, error: causeText(x) }),
    durationMs,
  }
}
