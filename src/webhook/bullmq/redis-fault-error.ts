import { EventwireError } from '../../core/errors/eventwire-error.js'

/**
 * Emitted as `'error'` by a `WebhookWorker` when Redis refused or dropped a step of a job: the
 * write that records its outcome or its next attempt, its move to later, or a read of a URL's
 * shared state. The job is not failed for it: it stays in Redis, and a worker takes it again once
 * its lock has expired (`lockDuration`, then up to `stalledInterval`). What was already sent may
 * be sent again then: delivery is at least once. `cause` is what Redis or ioredis said.
 *
 * A full Redis (`OOM`, under `maxmemory-policy noeviction`) is one fault for the whole worker: it
 * stops taking jobs, says so once with this error, and starts again when Redis takes writes.
 *
 * @example
 * ```ts
 * import { RedisFaultError, WebhookWorker } from 'eventwire/webhook/bullmq'
 *
 * const worker = new WebhookWorker(
 *   { webhooks: [{ url: 'https://hooks.example.com/in' }] },
 *   { connection: { host: '127.0.0.1', port: 6379, maxRetriesPerRequest: null } },
 * )
 * worker.on('error', (error) => {
 *   if (error instanceof RedisFaultError) console.warn(error.jobId ?? 'worker', error.message)
 * })
 * ```
 */
export class RedisFaultError extends EventwireError<'ERR_REDIS_FAULT'> {
  /** The job whose step Redis refused; `undefined` when the fault stopped the whole worker. */
  readonly jobId: string | undefined

  constructor(message: string, jobId: string | undefined, cause: Error) {
    super('ERR_REDIS_FAULT', message, { cause })
    this.jobId = jobId
  }
}
