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
  | 'ERR_MESSAGE_TOO_LARGE'
  | 'ERR_CLOSED'
  | 'ERR_QUEUE_FULL'
  | 'ERR_REJECTED'
  | 'ERR_RETRIES_EXHAUSTED'
  | 'ERR_CLOSE_TIMEOUT'
  | 'ERR_HTTP_STATUS'
  | 'ERR_TIMEOUT'
  | 'ERR_NETWORK'
  | 'ERR_TLS_CERTIFICATE'
  | 'ERR_BLOCKED_TARGET'
  | 'ERR_CALLBACK'

/**
 * Base class of every error eventwire throws or emits.
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
  }
}
