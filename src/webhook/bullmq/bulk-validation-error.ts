import { ValidationError } from '../../core/errors/validation-error.js'

/**
 * Thrown (as a rejection) by `WebhookQueue.enqueueBulk()` when one of its events breaks a rule:
 * none of the events was stored. `index` is that event's position in the array; `code` and
 * `field` are those of the event's own {@link ValidationError}, which is the `cause`.
 *
 * @example
 * ```ts
 * import { BulkValidationError, WebhookQueue } from 'eventwire/webhook/bullmq'
 *
 * const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: 6379 } })
 * try {
 *   await queue.enqueueBulk([
 *     { type: 'track', userId: 'u1', event: 'Paid' },
 *     { type: 'track', userId: '', event: 'Paid' },
 *   ])
 * } catch (error) {
 *   if (error instanceof BulkValidationError) console.error(error.index, error.field) // 1 'userId'
 * }
 * ```
 */
export class BulkValidationError extends ValidationError {
  /** The position of the first event that broke a rule. */
  readonly index: number

  constructor(index: number, error: ValidationError) {
    super(error.code, error.field, `events[${index}]: ${error.message} Nothing was stored.`, { cause: error })
    this.index = index
  }
}
