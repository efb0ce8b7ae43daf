import { EventwireError } from '../../core/errors/eventwire-error.js'

/**
 * Thrown (as a rejection of `WebhookQueue.enqueue()`, with `waitForReplicas`) when the Redis
 * primary stored the event but fewer replicas than asked confirmed it within the time limit, or
 * the connection changed before they could: the event may or may not survive a failover.
 * Enqueueing it again with the same `messageId` is safe: it is stored once.
 *
 * @example
 * ```ts
 * import { ReplicaAckError, WebhookQueue } from 'eventwire/webhook/bullmq'
 *
 * const queue = new WebhookQueue({
 *   connection: { host: '127.0.0.1', port: 6379 },
 *   waitForReplicas: { count: 1, timeoutMs: 1_000 },
 * })
 * const event = { type: 'track', messageId: 'order-1042', userId: 'u1', event: 'Paid' } as const
 * try {
 *   await queue.enqueue(event)
 * } catch (error) {
 *   // The primary has it, no replica confirmed it yet: try again later, with the same messageId.
 *   if (error instanceof ReplicaAckError) console.warn(error.acknowledged, 'of', error.required, 'replicas')
 * }
 * ```
 */
export class ReplicaAckError extends EventwireError<'ERR_NOT_REPLICATED'> {
  /** Replicas that confirmed the write (`WAIT`'s answer); 0 when the connection changed first. */
  readonly acknowledged: number
  /** Replicas asked for (`waitForReplicas.count`). */
  readonly required: number
  /** How long the primary waited for them (ms). */
  readonly timeoutMs: number

  constructor(message: string, acknowledged: number, required: number, timeoutMs: number, cause?: Error) {
    super('ERR_NOT_REPLICATED', message, cause === undefined ? undefined : { cause })
    this.acknowledged = acknowledged
    this.required = required
    this.timeoutMs = timeoutMs
  }
}
