// Durable delivery, worker side: deliver what producers stored, with the in-memory engine's rules.
// Run as many as you like; a killed worker's events come back to the others.
//
//   REDIS_URL=redis://127.0.0.1:6379 WEBHOOK_URL=https://hooks.example.com/in WEBHOOK_SECRET=s3cret \
//     node examples/durable-worker.mjs
import { WebhookWorker } from 'eventwire/webhook/bullmq'

// Redis must keep what it acknowledges: run it with `appendonly yes` (durability: 'strict', the
// default, refuses it otherwise; pass durability: 'best-effort' to accept losing events on a restart).
const { hostname: host, port } = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
const worker = new WebhookWorker(
  {
    webhooks: [{ url: process.env.WEBHOOK_URL ?? 'http://127.0.0.1:3000/webhooks' }],
    sharedSecret: process.env.WEBHOOK_SECRET,
  },
  // BullMQ workers need maxRetriesPerRequest: null on their Redis connection.
  { connection: { host, port: Number(port || 6379), maxRetriesPerRequest: null }, concurrency: 100 },
)
worker.on('delivered', (result) => console.log('delivered', result.eventId))
worker.on('retry', (notice) =>
  console.log('retry', notice.eventId, notice.error.code, new Date(notice.retryAt).toISOString()),
)
worker.on('failed', (result) => console.log('dead letter', result.eventId))

// Graceful shutdown: finish the rounds in progress; retries stay in Redis as delayed jobs.
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void worker.close().then(() => process.exit(0)))
await worker.ready()
console.log('worker ready')
