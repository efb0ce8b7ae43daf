// A WebhookWorker in its own process whose wall clock runs SKEW_MS off the real time (`Date.now`,
// which BullMQ and eventwire read, is shifted, as a drifting host or a paused VM shifts it).
// SETTINGS is the worker's settings as JSON, with `backoffMs` for a fixed backoff. Prints one JSON
// line per event: {"event":"ready"}, then "url-state", "attempt", "delivered", "failed"; on
// SIGTERM it closes and prints {"event":"closed"}.
import { WebhookWorker } from '../../src/webhook/bullmq/index.js'
import type { WebhookSettings } from '../../src/webhook/index.js'

const skew = Number(process.env['SKEW_MS'] ?? 0)
const realNow = Date.now.bind(Date)
Date.now = () => realNow() + skew

const { backoffMs, ...settings } = JSON.parse(process.env['SETTINGS'] ?? '{}') as WebhookSettings & {
  backoffMs?: number
}
const say = (line: Record<string, unknown>) => console.log(JSON.stringify(line))
const worker = new WebhookWorker(
  { ...settings, ...(backoffMs === undefined ? {} : { backoff: () => backoffMs }) },
  {
    connection: { host: '127.0.0.1', port: Number(process.env['REDIS_PORT']), maxRetriesPerRequest: null },
    name: process.env['QUEUE'] ?? 'eventwire-webhooks',
    concurrency: 10,
  },
)
worker.on('url-state', ({ circuit }) => say({ event: 'url-state', circuit }))
worker.on('attempt', (notice) => say({ event: 'attempt', id: notice.eventId, status: notice.status }))
worker.on('delivered', (result) => say({ event: 'delivered', id: result.eventId }))
worker.on('failed', (result) => say({ event: 'failed', id: result.eventId }))
worker.on('warning', (message) => say({ event: 'warning', message }))
worker.on('error', (error) => say({ event: 'error', message: error.message }))
process.on('SIGTERM', () => {
  void worker.close().then(() => {
    say({ event: 'closed' })
    process.exit(0)
  })
})
await worker.ready()
say({ event: 'ready' })
