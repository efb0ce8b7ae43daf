import { describeError } from '../core/describe-error.js'
import { EventwireError } from '../core/errors/eventwire-error.js'
import type { MessageType } from '../core/messages.js'

/** Codes of {@link DeliveryError}: why accepted messages were not delivered. */
export type DeliveryErrorCode =
  | 'ERR_QUEUE_FULL'
  | 'ERR_REJECTED'
  | 'ERR_RETRIES_EXHAUSTED'
  | 'ERR_CLOSE_TIMEOUT'
  | 'ERR_PAGE_LEFT'
  | 'ERR_INVALID_RESPONSE'

/** The ways a send fails: every {@link DeliveryErrorCode} but the queue's own. */
export type SendFailureCode = Exclude<DeliveryErrorCode, 'ERR_QUEUE_FULL'>

/** A batch request that failed, after every retry: what its {@link DeliveryError} is worded from. */
export interface SendFailure {
  readonly ok: false
  /**
   * In the client's words: `ERR_REJECTED`, a final status; `ERR_RETRIES_EXHAUSTED`, retryable
   * failures outlasted the budget; `ERR_CLOSE_TIMEOUT`, the signal (close()'s deadline) fired;
   * `ERR_PAGE_LEFT`, an attempt failed as the page was being left, or the page was left during
   * a `Retry-After` wait (see `RetryWaits`); `ERR_INVALID_RESPONSE`, the `fetch` option
   * resolved something that is not a `Response`.
   */
  readonly code: SendFailureCode
  readonly status: number | undefined
  readonly attempts: number
  /**
   * Why the batch failed. On `ERR_CLOSE_TIMEOUT`, why the attempt before the deadline failed
   * (the deadline itself says nothing of why the batch was still unsent), or `undefined`.
   */
  readonly error: unknown
  /** On `ERR_REJECTED`: the start of the response body, the server's own reason (see `bodyExcerpt` in src/core/body-excerpt.ts). */
  readonly responseText?: string | undefined
}

/** A message the client accepted: its wire JSON, exactly as sent, as a {@link DeliveryError} lists it. */
export interface MessageRecord {
  readonly type: MessageType
  readonly messageId: string
  /** The message's JSON, serialized once when the call was made. */
  readonly json: string
}

/**
 * Emitted as `'error'` (and passed to per-call callbacks) when accepted messages end undelivered:
 *
 * - `ERR_QUEUE_FULL`: dropped at the call, the queue was at `maxQueueSize` or `maxQueueBytes`.
 * - `ERR_REJECTED`: the endpoint answered a status that is not retried (4xx other than 408 and 429).
 * - `ERR_RETRIES_EXHAUSTED`: network errors, timeouts, 5xx, 408 or 429 outlasted the retry budget.
 * - `ERR_CLOSE_TIMEOUT`: `close()` ran out of time before these were sent.
 * - `ERR_PAGE_LEFT`: a browser page was left with these queued (or their request failed as it was
 *   left), and neither the keepalive budget nor `localStorage` (see `storeOnPageHide`) could take them.
 * - `ERR_INVALID_RESPONSE`: the `fetch` option resolved something that is not a `Response` (a
 *   plain object, `undefined`, a string); `cause` names it. Not retried: the code given is at fault.
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

/** What the wording of a {@link DeliveryError} needs from the client's options. */
export interface ErrorContext {
  readonly batchUrl: string
  readonly maxQueueSize: number
  readonly maxQueueBytes: number
  readonly storeOnPageHide: boolean
}

/**
 * The {@link DeliveryError} for `messages` that end with `code`, worded to say why and what to do;
 * `result` is the failed send, `undefined` for the queue's own outcomes (full, close(), page left).
 */
export function deliveryError(
  code: DeliveryErrorCode,
  messages: readonly MessageRecord[],
  result: SendFailure | undefined,
  context: ErrorContext,
): DeliveryError {
  const count = `${messages.length} message(s)`
  const url = context.batchUrl
  const reasons: Record<DeliveryErrorCode, string> = {
    ERR_QUEUE_FULL: `Dropped ${count}: the queue is full (maxQueueSize ${context.maxQueueSize}, maxQueueBytes ${context.maxQueueBytes}). Wait for 'drain' when a call returns false, or raise the bounds.`,
    ERR_REJECTED: `${url} rejected a batch of ${count} with HTTP ${result?.status}${result?.responseText === undefined ? '' : ` (${result.responseText})`}; not retried. Check the write key and the payload.`,
    ERR_RETRIES_EXHAUSTED: `Could not deliver a batch of ${count} to ${url} after ${result?.attempts} attempt(s): ${describeError(result?.error)}.`,
    ERR_PAGE_LEFT: `The page was left with ${count} that neither the keepalive budget (64 KiB) nor localStorage could take${context.storeOnPageHide ? '' : ' (storeOnPageHide is false)'}${result?.error === undefined ? '' : ` (their request failed: ${describeError(result.error)})`}; they are lost. Call flush() earlier, on the action that leaves the page.`,
    ERR_CLOSE_TIMEOUT: `close() timed out before ${count} could be delivered to ${url}${
      result?.error === undefined ? '' : `; the last failed attempt: ${describeError(result.error)}`
    }.`,
    ERR_INVALID_RESPONSE: `A batch of ${count} failed: ${describeError(result?.error)}; not retried.`,
  }
  return new DeliveryError(code, reasons[code], {
    messages,
    status: result?.status,
    attempts: result?.attempts ?? 0,
    cause: result?.error,
  })
}
