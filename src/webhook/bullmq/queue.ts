import { Queue, type ConnectionOptions, type Job } from 'bullmq'
import type { JsonObject } from '../../core/json-value.js'
import type { WebhookEvent } from '../event.js'
import { checkEvent } from '../prepare.js'
import { jobIdOf, type StoredTarget, type WebhookJobData } from './job-data.js'

/** Where the queue lives. */
export interface WebhookQueueOptions {
  /** ioredis options or instance, as BullMQ takes them. */
  connection: ConnectionOptions
  /** Queue name, shared by producers and workers. @defaultValue 'eventwire-webhooks' */
  name?: string | undefined
  /** Redis key prefix. @defaultValue 'bull' */
  prefix?: string | undefined
}

/** What `enqueue()` did with an event. */
export interface EnqueueResult {
  readonly eventId: string
  /** `queued`: stored in Redis (acknowledged); `skipped`: its `integrations` turn the destination off. */
  readonly status: 'queued' | 'skipped'
}

/** An event that failed for good or ran out of its retry window, kept for the operator. */
export interface DeadLetter {
  readonly eventId: string
  /** Epoch ms when it failed. */
  readonly failedAt: number | undefined
  /** Why, in one line. */
  readonly reason: string
  /** Each URL's last state, including its last error code and status. */
  readonly urls: readonly StoredTarget[]
}

/** The queue name producers and workers agree on by default. */
export const DEFAULT_QUEUE_NAME = 'eventwire-webhooks'

/**
 * The producer side of durable delivery: validates each event, serializes its payload once and
 * stores it in Redis through BullMQ, from any process. Workers ({@link WebhookWorker}) deliver
 * it. Also the operator's handle on the dead-letter list.
 *
 * @example
 * ```ts
 * import { WebhookQueue } from 'eventwire/webhook/bullmq'
 *
 * const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: 6379 } })
 * await queue.enqueue({ type: 'track', userId: 'u1', event: 'Paid' })
 * for (const letter of await queue.deadLetters()) await queue.redrive(letter.eventId)
 * ```
 */
export class WebhookQueue {
  readonly #queue: Queue<WebhookJobData>

  constructor(options: WebhookQueueOptions) {
    this.#queue = new Queue<WebhookJobData>(options.name ?? DEFAULT_QUEUE_NAME, {
      connection: options.connection,
      ...(options.prefix === undefined ? {} : { prefix: options.prefix }),
    })
  }

  /**
   * Stores an event for delivery. Resolves once Redis has it. Enqueueing the same `messageId`
   * twice stores it once.
   *
   * @throws `ValidationError` (as a rejection) for an event that cannot become a payload, by the
   * same rules as `WebhookDestination.deliver()`, even when its `integrations` would skip it.
   * @example
   * ```ts
   * import { WebhookQueue } from 'eventwire/webhook/bullmq'
   *
   * const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: 6379 } })
   * const { eventId, status } = await queue.enqueue({ type: 'track', messageId: 'order-1042', userId: 'u1', event: 'Paid' })
   * console.log(eventId, status) // 'order-1042' 'queued': Redis has it; a worker delivers it
   * ```
   */
  async enqueue<Data extends object = JsonObject>(event: WebhookEvent<Data>): Promise<EnqueueResult> {
    const { eventId, body, enabled } = checkEvent(event)
    if (!enabled) return { eventId, status: 'skipped' }
    await this.#queue.add('deliver', { eventId, body }, { jobId: jobIdOf(eventId), removeOnComplete: true, removeOnFail: false })
    return { eventId, status: 'queued' }
  }

  /**
   * Dead letters, most recently failed first (BullMQ's order): events that failed for good or ran
   * out of their retry window. `start` and `end` are positions in that list, both included (the
   * first 100 by default).
   *
   * @example
   * ```ts
   * import { WebhookQueue } from 'eventwire/webhook/bullmq'
   *
   * const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: 6379 } })
   * for (const letter of await queue.deadLetters()) {
   *   console.log(letter.eventId, letter.reason, letter.urls.map((url) => url.lastStatus))
   * }
   * ```
   */
  async deadLetters(start = 0, end = 99): Promise<DeadLetter[]> {
    const jobs = await this.#queue.getFailed(start, end)
    return jobs.map((job: Job<WebhookJobData>) => ({
      eventId: job.data.eventId,
      failedAt: job.finishedOn,
      reason: job.failedReason,
      urls: job.data.state?.targets ?? [],
    }))
  }

  /**
   * Sends a dead letter again, with a fresh retry window and the same body and id.
   *
   * @returns whether there was such a dead letter.
   * @example
   * ```ts
   * import { WebhookQueue } from 'eventwire/webhook/bullmq'
   *
   * const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: 6379 } })
   * // Once the receiver is fixed, send every dead letter again.
   * for (const letter of await queue.deadLetters()) await queue.redrive(letter.eventId)
   * ```
   */
  async redrive(eventId: string): Promise<boolean> {
    const job = await this.#queue.getJob(jobIdOf(eventId))
    if (!job || !(await job.isFailed())) return false
    await job.updateData({ eventId: job.data.eventId, body: job.data.body })
    await job.retry('failed')
    return true
  }

  /** How many events wait, are delayed for a retry, are being delivered, or are dead letters. */
  async counts(): Promise<{ waiting: number; delayed: number; active: number; failed: number }> {
    const counts = await this.#queue.getJobCounts('waiting', 'delayed', 'active', 'failed')
    return { waiting: counts['waiting'] ?? 0, delayed: counts['delayed'] ?? 0, active: counts['active'] ?? 0, failed: counts['failed'] ?? 0 }
  }

  /** Closes the Redis connection. */
  async close(): Promise<void> {
    await this.#queue.close()
  }
}
