// A WebhookWorker in its own process, for the crash and sharing tests. Prints "ready" once it
// takes jobs; on SIGTERM closes gracefully and prints {"delivered":N} on its last line.
import { WebhookWorker } from '../../src/webhook/bullmq/index.js'

const port = Number(process.env['REDIS_PORT'])
const url = process.env['WEBHOOK_URL'] ?? ''
const name = process.env['QUEUE'] ?? 'eventwire-webhooks'
const worker = new WebhookWorker(
  { webhooks: [{ url }], sharedSecret: 's3cret', backoff: () => 50 },
  {
    connection: { host: '127.0.0.1', port, maxRetriesPerRequest: null },
    name,
    concurrency: Number(process.env['CONCURRENCY'] ?? 20),
    lockDuration: 2_000,
    stalledInterval: 1_000,
  },
)
let delivered = 0
worker.on('delivered', () => delivered++)
process.on('SIGTERM', () => {
  void worker.close().then(() => {
    console.log(JSON.stringify({ delivered }))
    process.exit(0)
  })
})
await worker.ready()
console.log('ready')
