// Durable delivery, producer side: store events in Redis from any process of your platform.
//
//   REDIS_URL=redis://127.0.0.1:6379 node examples/durable-producer.mjs
//   (workers: examples/durable-worker.mjs, in as many processes and machines as you need)
import { WebhookQueue } from 'eventwire/webhook/bullmq'

// Redis must keep what it acknowledges: run it with `appendonly yes` (durability: 'strict', the
// default, refuses it otherwise; pass durability: 'best-effort' to accept losing events on a restart).
const { hostname: host, port } = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
const queue = new WebhookQueue({ connection: { host, port: Number(port || 6379) } })

// A messageId makes a retry safe: run this twice within a day and the second run stores nothing,
// each event answering 'duplicate' (or 'dead-letter': redrive() sends those again).
const statuses = {}
for (let index = 0; index < 100; index++) {
  // Resolves once Redis holds the event; a bad event rejects here, not in a worker.
  const { status } = await queue.enqueue({
    type: 'track',
    messageId: `order-${index}`,
    userId: `user-${index}`,
    event: 'Order Completed',
    properties: { total: index },
  })
  statuses[status] = (statuses[status] ?? 0) + 1
}
console.log('enqueued 100 events:', statuses, 'counts now', await queue.counts())

// The operator's view: events that failed for good or ran out of their 4-hour window.
for (const letter of await queue.deadLetters()) {
  console.log(
    'dead letter',
    letter.eventId,
    letter.reason,
    letter.urls.map((url) => `${url.url} ${url.failure?.code} ${url.failure?.status ?? ''}`),
  )
}
await queue.close()
