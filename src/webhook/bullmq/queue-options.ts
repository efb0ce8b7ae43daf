import type { ConnectionOptions } from 'bullmq'
import type { Durability } from './durability.js'

/** Where the queue lives. */
export interface WebhookQueueOptions {
  /** ioredis options or instance, as BullMQ takes them. */
  connection: ConnectionOptions
  /** Queue name, shared by producers and workers. @defaultValue 'eventwire-webhooks' */
  name?: string | undefined
  /** Redis key prefix. @defaultValue 'bull' */
  prefix?: string | undefined
  /**
   * What Redis must keep: `strict` refuses to enqueue unless Redis has its append-only file on
   * (a restart would lose acknowledged events); `best-effort` enqueues anyway and emits
   * `'warning'` once. See docs/durable-delivery.md. @defaultValue 'strict'
   */
  durability?: Durability | undefined
  /** How long `enqueue()` and `ready()` wait for Redis before rejecting with `RedisTimeoutError` (ms). @defaultValue 10_000 */
  enqueueTimeout?: number | undefined
  /**
   * How long (ms) and how many dead letters Redis keeps: older or further ones are removed as
   * later events fail (BullMQ trims when a job fails). Set when an event is enqueued: it applies
   * to events enqueued with it. `purgeDeadLetters()` removes the rest.
   * @defaultValue { maxAgeMs: 604_800_000 (7 days), maxCount: 100_000 }
   */
  deadLetters?: { maxAgeMs?: number | undefined; maxCount?: number | undefined } | undefined
  /**
   * How long Redis remembers a delivered `messageId`, from its delivery (ms): enqueued again
   * within it, the event answers `'duplicate'` and is not sent again. While an event is in Redis
   * (waiting, retrying, being sent, or a dead letter) its id is remembered anyway. `0` remembers it
   * no longer than that. Costs a small key per delivered event, for the window, timed by Redis's
   * own expiry (see docs/durable-delivery.md). @defaultValue 86_400_000 (24 hours)
   */
  dedupWindowMs?: number | undefined
  /**
   * Makes `enqueue()` resolve only once `count` replicas of the Redis primary have the event
   * (Redis's `WAIT`), so that a failover cannot lose what it acknowledged. When fewer confirm
   * within `timeoutMs` (1,000 ms by default, less than `enqueueTimeout`), `enqueue()` rejects with
   * `ReplicaAckError`. Leave it out with no replicas: every enqueue would be refused. See
   * docs/durable-delivery.md. @defaultValue none: the primary's acknowledgement is enough
   */
  waitForReplicas?: { count: number; timeoutMs?: number | undefined } | undefined
}
