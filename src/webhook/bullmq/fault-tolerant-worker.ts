import type { Job } from 'bullmq'
import { isRedisFault } from './redis-fault.js'
import { StoredJobWorker } from './stored-queue.js'

/** What BullMQ throws on purpose to leave a job where the processor put it, and our final refusals. */
const DECIDED = new Set([
  'DelayedError',
  'WaitingError',
  'WaitingChildrenError',
  'RateLimitError',
  'UnrecoverableError',
])

/**
 * The BullMQ worker of a `WebhookWorker`. BullMQ fails a job for any error its processor throws,
 * and for an error of the write that completes it: a Redis that refused one step (a failover's
 * `CLUSTERDOWN`, a full Redis's `OOM`) would end an event as a dead letter, delivered or not.
 * Here a job whose step Redis refused is left where it is: active, its lock no longer renewed, so
 * the stalled check puts it back once the lock expires, and a worker runs it again from the state
 * last stored. `left` hears of each.
 */
export class FaultTolerantWorker<Data> extends StoredJobWorker<Data> {
  left: ((job: Job<Data>, fault: Error) => void) | undefined

  protected override async handleFailed(
    error: Error,
    job: Job<Data>,
    token: string,
    fetchNextCallback?: () => boolean,
    span?: Parameters<StoredJobWorker<Data>['handleFailed']>[4],
  ): Promise<Job<Data>> {
    if (!DECIDED.has(error.name) && isRedisFault(error)) {
      this.left?.(job, error)
      // As BullMQ does for a job it leaves delayed: nothing moved, the next job fetched by the loop.
      return undefined as unknown as Job<Data>
    }
    return super.handleFailed(error, job, token, fetchNextCallback, span)
  }
}
