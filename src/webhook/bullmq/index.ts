/**
 * Durable webhook delivery on BullMQ and Redis: `WebhookQueue` for producers, `WebhookWorker` for the processes that deliver.
 *
 * @module eventwire/webhook/bullmq
 */
export { WebhookQueue, DEFAULT_QUEUE_NAME } from './queue.js'
export type { DeadLetter, EnqueueOptions, EnqueueResult, QueueCounts, WebhookQueueEvents } from './queue.js'
export { WebhookDestinations } from './webhook-destinations.js'
export { WebhookSources } from './webhook-sources.js'
export { SourceConflictError } from './source-conflict-error.js'
export type { Source, StoredSource } from './source-record.js'
export { DestinationConflictError } from '../delivery/destination-conflict-error.js'
export type { SetDestinationOptions } from './webhook-destinations.js'
export type { Destination, StoredDestination } from '../delivery/destination-record.js'
export { UnknownDestinationError } from '../delivery/unknown-destination-error.js'
export type { HeldUrl } from './held-jobs.js'
export type { AttemptsOptions, LoggedAttempt } from './logged-attempt.js'
export type { AttemptLogOptions } from './attempt-log.js'
export type { KeepSentOptions } from './sent-bodies.js'
export type { ReplayOptions, ReplayResult } from './replay.js'
export type {
  AlertOptions,
  BackAlert,
  DeliveryAlert,
  DisabledAlert,
  FailingAlert,
  GivenUpAlert,
} from './delivery-alerts.js'
export type { WebhookQueueOptions } from './queue-options.js'
export { WebhookWorker } from './worker.js'
export type {
  DestinationsWorkerSettings,
  RecoveredJob,
  RepeatedRun,
  WebhookWorkerEvents,
  WebhookWorkerOptions,
  WorkerCloseOptions,
} from './worker.js'
export type { StoredFailure, StoredState, StoredTarget } from './job-data.js'
export type { Durability } from './durability.js'
export type { WorkerUrlState } from './worker-lanes.js'
export { RedisTimeoutError } from './redis-timeout-error.js'
export { RedisRefusedError } from './redis-refused-error.js'
export { BulkValidationError } from './bulk-validation-error.js'
export { ReplicaAckError } from './replica-ack-error.js'
export { RedisFaultError } from './redis-fault-error.js'
