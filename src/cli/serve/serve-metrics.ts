import { createServer, type Server } from 'node:http'
import type { WebhookQueue, WebhookWorker } from '../../webhook/bullmq/index.js'
import type { WebhookInstrumentation } from '../../webhook/otel/index.js'
import { loadEntry } from '../registry/connect.js'
import { PrometheusMeter } from './prometheus-meter.js'

// `eventwire serve --metrics-port`: the library's webhook instruments on the worker and the queue,
// and serve's own on the ingest API, written in the Prometheus text format at GET /metrics on a
// port of their own (not the ingest port, which a load balancer may open to the world).

/** What serve counts of its ingest API. */
export type IngestMeasure = (status: number, source: string | undefined, events: number) => void

/** The metrics of one serve process, and the server that answers scrapes. */
export interface ServeMetrics {
  readonly server: Server
  /** Counts one ingest answer. */
  readonly measure: IngestMeasure
  stop(): void
}

/** The OpenTelemetry entry, loaded by the package's name: only this option needs `@opentelemetry/api`. */
function loadOtel(): Promise<typeof import('../../webhook/otel/index.js')> {
  return loadEntry(
    'eventwire/webhook/otel',
    '--metrics-port needs the optional package @opentelemetry/api beside eventwire: npm install @opentelemetry/api',
  )
}

/**
 * The meter, the instruments on `queue` and `worker` (when this process runs one), and a server
 * for scrapes, not yet listening. Destinations are labelled by id, at most 100 of them; the rest
 * share `_other`.
 */
export async function createServeMetrics(
  queue: WebhookQueue,
  worker: WebhookWorker | undefined,
): Promise<ServeMetrics> {
  const { instrumentWebhooks } = await loadOtel()
  const meter = new PrometheusMeter()
  const options = { meterProvider: meter, destinationLabel: (id: string) => id }
  const instrumented: WebhookInstrumentation[] = [instrumentWebhooks(queue, options)]
  if (worker !== undefined) instrumented.push(instrumentWebhooks(worker, options))
  const requests = meter.getMeter().createCounter('eventwire.serve.requests', {
    description: 'Requests to the ingest API, by the status answered and the source.',
    unit: '{request}',
  })
  const events = meter.getMeter().createCounter('eventwire.serve.events', {
    description: 'Events of requests answered 200: in Redis for every destination of their source.',
    unit: '{event}',
  })
  const server = createServer((request, response) => {
    if ((request.url ?? '/').split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('GET /metrics\n')
      return
    }
    meter.text().then(
      (text) => response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(text),
      (error: unknown) => response.writeHead(500, { 'content-type': 'text/plain' }).end(`${String(error)}\n`),
    )
  })
  return {
    server,
    measure: (status, source, count) => {
      const bySource = source === undefined ? {} : { 'eventwire.source': source }
      requests.add(1, { 'http.response.status_code': status, ...bySource })
      if (status === 200) events.add(count, bySource)
    },
    stop: () => {
      for (const instrumentation of instrumented) instrumentation.stop()
    },
  }
}
