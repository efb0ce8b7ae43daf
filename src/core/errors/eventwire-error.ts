/**
 * Every stable error code eventwire can produce. Branch on `error.code`, never on the message text:
 * codes are part of the public API and only ever grow.
 */
export type ErrorCode =
  | 'ERR_INVALID_OPTION'
  | 'ERR_INVALID_FIELD'
  | 'ERR_MISSING_IDENTITY'
  | 'ERR_MISSING_EVENT'
  | 'ERR_MISSING_GROUP_ID'
  | 'ERR_MISSING_USER_ID'
  | 'ERR_MISSING_PREVIOUS_ID'
  | 'ERR_NOT_SERIALIZABLE'
  | 'ERR_PLAN_VIOLATION'
  | 'ERR_MIDDLEWARE'
  | 'ERR_MESSAGE_TOO_LARGE'
  | 'ERR_CLOSED'
  | 'ERR_QUEUE_FULL'
  | 'ERR_REJECTED'
  | 'ERR_RETRIES_EXHAUSTED'
  | 'ERR_CLOSE_TIMEOUT'
  | 'ERR_PAGE_LEFT'
  | 'ERR_INVALID_RESPONSE'
  | 'ERR_QUEUE_LOCKED'
  | 'ERR_QUEUE_DIRECTORY'
  | 'ERR_HTTP_STATUS'
  | 'ERR_TIMEOUT'
  | 'ERR_NETWORK'
  | 'ERR_TLS_CERTIFICATE'
  | 'ERR_BLOCKED_TARGET'
  | 'ERR_PROXY'
  | 'ERR_CALLBACK'
  | 'ERR_BACKLOG_FULL'
  | 'ERR_CIRCUIT_OPEN'
  | 'ERR_NOT_REPLICATED'
  | 'ERR_REDIS_FAULT'
  | 'ERR_REDIS_REFUSED'
  | 'ERR_UNKNOWN_DESTINATION'
  | 'ERR_DESTINATION_DISABLED'
  | 'ERR_DESTINATION_CONFLICT'
  | 'ERR_SOURCE_CONFLICT'

/**
 * Marks every eventwire error, whichever copy of the library made it. `Symbol.for` returns the
 * same symbol in every module format, bundle and realm, where each copy has its own classes.
 */
const BRAND = Symbol.for('eventwire.error')

/**
 * Base class of every error eventwire throws or emits. To recognise one, prefer
 * {@link isEventwireError} to `instanceof`: an application that loads eventwire twice (`import`
 * here, `require` in a dependency; two bundles; a `vm` context or an iframe) has two classes,
 * and `instanceof` against one of them is false for the other's errors.
 *
 * @example
 * ```ts
 * import { Client, EventwireError } from 'eventwire'
 *
 * const client = new Client('WRITE_KEY', { endpoint: 'https://ingest.example.com' })
 * try {
 *   client.track({ userId: 'u1', event: '' })
 * } catch (error) {
 *   if (error instanceof EventwireError && error.code === 'ERR_MISSING_EVENT') console.error(error.message)
 * }
 * ```
 */
export class EventwireError<Code extends ErrorCode = ErrorCode> extends Error {
  /** Stable, machine-readable reason. */
  readonly code: Code

  constructor(code: Code, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
    this.name = new.target.name
    // Not enumerable: the brand stays out of logs, JSON and deep equality.
    Object.defineProperty(this, BRAND, { value: true })
  }
}

/**
 * Whether `value` is an error eventwire threw or emitted, from any copy of the library: its ESM
 * and CommonJS builds, another bundle, or another realm (`vm`, an iframe, a worker's transferred
 * value is a copy and does not count). It checks a brand (`Symbol.for('eventwire.error')`) rather
 * than the class, as ky's `isKyError` does. Narrow further on `code`, which is stable.
 *
 * @example
 * ```ts
 * import { Client, isEventwireError } from 'eventwire'
 *
 * const client = new Client('WRITE_KEY', { endpoint: 'https://ingest.example.com' })
 * try {
 *   client.track({ userId: 'u1', event: '' })
 * } catch (error) {
 *   if (isEventwireError(error) && error.code === 'ERR_MISSING_EVENT') console.error(error.message)
 *   else throw error
 * }
 * ```
 */
export function isEventwireError(value: unknown): value is EventwireError {
  return typeof value === 'object' && value !== null && (value as { [BRAND]?: unknown })[BRAND] === true
}
