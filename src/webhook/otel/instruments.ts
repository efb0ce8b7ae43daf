import type { Counter, Histogram, Meter, ObservableGauge } from '@opentelemetry/api'

/**
 * Bucket bounds of `http.client.request.duration`, in seconds: the ones OpenTelemetry's HTTP
 * conventions advise, so that eventwire's requests sit beside other HTTP clients' on one chart.
 */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]

/**
 * Bucket bounds of `eventwire.webhook.delivery.duration`, in seconds: from a request's time up to
 * the default retry window (4 hours), since a delivery can take retries as long as that.
 */
const DELIVERY_BUCKETS = [
  0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14_400,
]

/** Every instrument eventwire records to; the table in docs/metrics.md lists the same. */
export interface WebhookInstruments {
  /** Where they were made: gauge callbacks are added to it. */
  readonly meter: Meter
  readonly deliveries: Counter
  readonly deliveryDuration: Histogram
  readonly attempts: Counter
  readonly requestDuration: Histogram
  readonly circuitChanges: Counter
  readonly circuitStatus: ObservableGauge
  readonly queueDepth: ObservableGauge
  readonly heldByUrl: ObservableGauge
  readonly lateness: ObservableGauge
  readonly deadLetters: ObservableGauge
  readonly oldestWaitingAge: ObservableGauge
  readonly recoveredJobs: Counter
  readonly repeatedRuns: Counter
}

/**
 * Creates the instruments on `meter`. Creating them again (a second engine, the same meter) gives
 * the same streams: the SDK merges instruments of one name, kind and unit.
 */
export function createInstruments(meter: Meter): WebhookInstruments {
  return {
    meter,
    deliveries: meter.createCounter('eventwire.webhook.deliveries', {
      description: 'Events that ended: delivered, failed for good, or skipped by their integrations.',
      unit: '{event}',
    }),
    deliveryDuration: meter.createHistogram('eventwire.webhook.delivery.duration', {
      description: 'Time from deliver() or enqueue() until the event was delivered.',
      unit: 's',
      advice: { explicitBucketBoundaries: DELIVERY_BUCKETS },
    }),
    attempts: meter.createCounter('eventwire.webhook.attempts', {
      description: 'Requests sent to a webhook URL, by how they ended.',
      unit: '{attempt}',
    }),
    requestDuration: meter.createHistogram('http.client.request.duration', {
      description: 'Duration of HTTP client requests.',
      unit: 's',
      advice: { explicitBucketBoundaries: REQUEST_BUCKETS },
    }),
    circuitChanges: meter.createCounter('eventwire.webhook.circuit.changes', {
      description: "Changes of a URL's circuit breaker, by the state it entered.",
      unit: '{change}',
    }),
    circuitStatus: meter.createObservableGauge('eventwire.webhook.circuit.status', {
      description: "Where each URL's circuit breaker stands: 1 for its current state, 0 for the others.",
      unit: '1',
    }),
    queueDepth: meter.createObservableGauge('eventwire.webhook.queue.depth', {
      description: 'Deliveries waiting for a worker or a slot, waiting for a retry, held back by a URL, or in flight.',
      unit: '{delivery}',
    }),
    heldByUrl: meter.createObservableGauge('eventwire.webhook.queue.held', {
      description: 'Events a URL holds back, across every worker: its breaker is open, or its slots or rate are taken.',
      unit: '{event}',
    }),
    lateness: meter.createObservableGauge('eventwire.webhook.queue.lateness', {
      description: 'How long the next event a worker takes has been due; 0 when none is due.',
      unit: 's',
    }),
    deadLetters: meter.createObservableGauge('eventwire.webhook.queue.dead_letters', {
      description: 'Dead letters kept in Redis.',
      unit: '{event}',
    }),
    oldestWaitingAge: meter.createObservableGauge('eventwire.webhook.queue.oldest_waiting_age', {
      description:
        'How long the oldest event waiting for a worker has waited since it was enqueued; 0 when none waits.',
      unit: 's',
    }),
    recoveredJobs: meter.createCounter('eventwire.webhook.jobs.recovered', {
      description: "Jobs a worker's check put back in the queue after their worker stopped renewing its lock.",
      unit: '{job}',
    }),
    repeatedRuns: meter.createCounter('eventwire.webhook.deliveries.repeated', {
      description: 'Runs of a job whose earlier run did not finish: what that run sent may be sent again.',
      unit: '{event}',
    }),
  }
}
