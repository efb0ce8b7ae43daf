/**
 * Metrics of webhook delivery through the OpenTelemetry API: `instrumentWebhooks` measures a
 * `WebhookDestination`, a `WebhookWorker` or a `WebhookQueue`. Needs `@opentelemetry/api`.
 *
 * @module eventwire/webhook/otel
 */
export { instrumentWebhooks } from './instrument.js'
export type {
  InstrumentedEngine,
  InstrumentedQueue,
  InstrumentOptions,
  WebhookInstrumentation,
} from './instrument.js'
export type { QueueCountsLike } from './counts-reader.js'
