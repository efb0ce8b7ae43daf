// Webhook metrics on this machine: a WebhookDestination sends to two receivers on 127.0.0.1, one
// that accepts and one that answers 503, measured by instrumentWebhooks on an OpenTelemetry SDK
// meter provider; the instruments are printed once the events have ended.
//
//   npm install @opentelemetry/api @opentelemetry/sdk-metrics
//   npm run build && node examples/metrics.mjs
import { createServer } from 'node:http'
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics'
import { WebhookDestination } from 'eventwire/webhook'
import { instrumentWebhooks } from 'eventwire/webhook/otel'

/** A reader that hands over what it collects when asked: an exporter would send it instead. */
class PrintingReader extends MetricReader {
  async onForceFlush() {}
  async onShutdown() {}
}

async function receiver(status) {
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => response.writeHead(status).end())
  }).listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  return { server, url: `http://127.0.0.1:${server.address().port}/webhooks` }
}

const accepting = await receiver(200)
const failing = await receiver(503)
const reader = new PrintingReader()
const meterProvider = new MeterProvider({ readers: [reader] })

// Mode 'each': every event goes to both URLs. A short window: the 503 URL fails after a few retries.
const destination = new WebhookDestination({
  webhooks: [{ url: accepting.url }, { url: failing.url }],
  mode: 'each',
  retryWindowMs: 1_000,
  backoff: () => 200,
})
const labels = new Map([
  [accepting.url, 'accepting'],
  [failing.url, 'failing'],
])
const measured = instrumentWebhooks(destination, { meterProvider, urlLabel: (url) => labels.get(url) })

const events = Array.from({ length: 5 }, (_, index) => ({
  type: 'track',
  userId: 'u1',
  event: 'Paid',
  messageId: `order-${index}`,
}))
const results = await Promise.all(events.map((event) => destination.deliver(event)))
console.log(`${results.length} events: ${results.map((result) => result.status).join(', ')}\n`)

const { resourceMetrics } = await reader.collect()
for (const { metrics } of resourceMetrics.scopeMetrics) {
  for (const metric of metrics) {
    console.log(`${metric.descriptor.name} (${metric.descriptor.unit})`)
    for (const point of metric.dataPoints) {
      const { value } = point
      const shown = typeof value === 'number' ? value : `count ${value.count}, sum ${value.sum?.toFixed(3)}`
      console.log(`  ${JSON.stringify(point.attributes)}: ${shown}`)
    }
  }
}

measured.stop()
await destination.close()
await meterProvider.shutdown()
accepting.server.close()
failing.server.close()
