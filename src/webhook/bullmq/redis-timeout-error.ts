import { EventwireError } from '../../core/errors/eventwire-error.js'

/**
 * Thrown (as a rejection) when Redis did not answer within the time limit: it is down,
 * unreachable or overloaded. `cause` is the last connection error seen, when there was one.
 */
export class RedisTimeoutError extends EventwireError<'ERR_TIMEOUT'> {
  /** The limit that ran out (ms). */
  readonly timeoutMs: number

  constructor(message: string, timeoutMs: number, cause: Error | undefined) {
    super('ERR_TIMEOUT', message, cause === undefined ? undefined : { cause })
    this.timeoutMs = timeoutMs
  }
}
