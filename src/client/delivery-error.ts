import { EventwireError } from '../core/errors/eventwire-error.js'
import type { MessageRecord } from './batch.js'

/** Codes of {@link DeliveryError}: why accepted messages were not delivered. */
export type DeliveryErrorCode =
  | 'ERR_QUEUE_FULL'
  | 'ERR_REJECTED'
  | 'ERR_RETRIES_EXHAUSTED'
  | 'ERR_CLOSE_TIMEOUT'
  | 'ERR_PAGE_LEFT'

/**
 * Emitted as `'error'` (and passed to per-call callbacks) when accepted messages end undelivered:
 *
 * - `ERR_QUEUE_FULL`: dropped at the call, the queue was at `maxQueueSize` or `maxQueueBytes`.
 * - `ERR_REJECTED`: the endpoint answered a status that is not retried (4xx other than 408 and 429).
 * - `ERR_RETRIES_EXHAUSTED`: network errors, timeouts, 5xx, 408 or 429 outlasted the retry budget.
 * - `ERR_CLOSE_TIMEOUT`: `close()` ran out of time before these were sent.
 * - `ERR_PAGE_LEFT`: a browser page was left with these queued (or their request failed as it was
 *   left), and neither the keepalive budget nor `localStorage` (see `storeOnPageHide`) could take them.
 *
 * @example
 * ```ts
 * import { Client } from 'eventwire'
 *
 * const client = new Client('WRITE_KEY', { endpoint: 'https://ingest.example.com' })
 * client.on('error', (error) => {
 *   if (error.code === 'ERR_REJECTED') console.error(error.status, error.messages.map((m) => m.messageId))
 * })
 * ```
 */
export class DeliveryError extends EventwireError<DeliveryErrorCode> {
  /** The messages this outcome is about, with the exact JSON that was (or would have been) sent. */
  readonly messages: readonly MessageRecord[]
  /** HTTP status of the last response, when there was one. */
  readonly status: number | undefined
  /** HTTP attempts made (0 when nothing was sent). */
  readonly attempts: number

  constructor(
    code: DeliveryErrorCode,
    message: string,
    details: { messages: readonly MessageRecord[]; status?: number | undefined; attempts?: number; cause?: unknown },
  ) {
    super(code, message, details.cause === undefined ? undefined : { cause: details.cause })
    this.messages = details.messages
    this.status = details.status
    this.attempts = details.attempts ?? 0
  }
}
