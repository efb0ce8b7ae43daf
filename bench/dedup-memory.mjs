// Redis bytes per delivered event for the de-duplication window, on a Redis you start. Not part of `npm run bench`.
//
//   redis-server --port 17102 --bind 127.0.0.1 --save '' --appendonly yes --appendfsync everysec &
//   npm run build && node bench/dedup-memory.mjs --port 17102 [--events 10000]
//
// Each way of remembering delivered ids runs on a flushed Redis: 1,000 events delivered first (so
// that BullMQ's own keys and its event stream exist), then `--events` more, enqueued and delivered
// by a WebhookWorker to a local receiver that answers 204. Redis's `used_memory` after the first
// 1,000 and after the rest gives the bytes each delivered event leaves behind.
//
// - `none`: `dedupWindowMs: 0`, the job removed on completion (nothing remembered);
// - `remembered`: eventwire's default, each id a field of a small hash of its span of the window
//   (src/webhook/bullmq/remembered-ids.ts); `remembered` says how many hashes, how full, and their encodings;
// - `kept-job`: the alternative, BullMQ's `removeOnComplete: { age }` keeping each job's hash.
import { createServer } from 'node:http'
import { parseArgs } from 'node:util'
import { Queue } from 'bullmq'
import { toWebhookPayload } from 'eventwire/webhook'
import { WebhookQueue, WebhookWorker } from 'eventwire/webhook/bullmq'
import { Redis } from 'ioredis'
import { orderProperties } from './typical-event.mjs'

const { values } = parseArgs({ options: { port: { type: 'string' }, events: { type: 'string', default: '10000' } } })
const port = Number(values.port)
const total = Number(values.events)
const WARM_UP = 1_000
const connection = { host: '127.0.0.1', port }
const raw = new Redis(connection)

const receiver = createServer((request, response) => {
  request.resume()
  request.on('end', () => response.writeHead(204).end())
})
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve))
const url = `http://127.0.0.1:${receiver.address().port}/`

const event = (run, index) => ({
  type: 'track',
  messageId: `${run}-${index}`,
  userId: `user-${index % 1000}`,
  event: 'Order Completed',
  properties: orderProperties(index),
})

const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await raw.info('memory'))?.[1])

/** Enqueues `count` events with `enqueue(events)` and waits until the worker delivered them all. */
async function deliver(worker, enqueue, run, from, count) {
  let delivered = 0
  const done = new Promise((resolve) => {
    const listener = () => {
      if (++delivered === count) {
        worker.off('delivered', listener)
        resolve()
      }
    }
    worker.on('delivered', listener)
  })
  for (let start = from; start < from + count; start += 1_000) {
    await enqueue(Array.from({ length: Math.min(1_000, from + count - start) }, (_, i) => event(run, start + i)))
  }
  await done
}

async function measure(label, enqueue, close) {
  const name = 'dedup-memory'
  const worker = new WebhookWorker(
    { webhooks: [{ url }] },
    { connection: { ...connection, maxRetriesPerRequest: null }, name, concurrency: 50 },
  )
  await worker.ready()
  await deliver(worker, enqueue, label, 0, WARM_UP)
  const before = await usedMemory()
  await deliver(worker, enqueue, label, WARM_UP, total)
  const after = await usedMemory()
  const keys = await raw.dbsize()
  const sample = `${label}-${WARM_UP + 5}`
  const perKey = {
    job: await raw.memory('USAGE', `bull:${name}:evt-${sample}`),
    dedupKey: await raw.memory('USAGE', `bull:${name}:de:evt-${sample}`),
  }
  // The hashes that remember ids (eventwire's default): how many, how full, in which encoding.
  const shards = await raw.keys(`bull:${name}:seen:*:*:*`)
  let ids = 0
  let shardBytes = 0
  const encodings = {}
  for (const key of shards) {
    ids += await raw.hlen(key)
    shardBytes += await raw.memory('USAGE', key, 'SAMPLES', '0')
    const encoding = await raw.object('ENCODING', key)
    encodings[encoding] = (encodings[encoding] ?? 0) + 1
  }
  const remembered =
    shards.length === 0
      ? undefined
      : {
          shards: shards.length,
          ids,
          idsPerShard: Math.round(ids / shards.length),
          memoryUsagePerId: Math.round(shardBytes / ids),
          encodings,
        }
  await worker.close()
  await close()
  return {
    label,
    bytesPerDeliveredEvent: Math.round((after - before) / total),
    keys,
    memoryUsageOfOne: perKey,
    ...(remembered === undefined ? {} : { remembered }),
  }
}

const results = []
for (const label of ['none', 'remembered', 'kept-job']) {
  await raw.flushall()
  const name = 'dedup-memory'
  if (label === 'kept-job') {
    const queue = new Queue(name, { connection })
    const toJob = (item) => {
      const jobId = `evt-${encodeURIComponent(item.messageId)}`
      const body = JSON.stringify(toWebhookPayload(item))
      return { name: 'deliver', data: { eventId: item.messageId, body }, opts: { jobId } }
    }
    results.push(
      await measure(
        label,
        (items) =>
          queue.addBulk(
            items.map((item) => ({ ...toJob(item), opts: { ...toJob(item).opts, removeOnComplete: { age: 86_400 } } })),
          ),
        () => queue.close(),
      ),
    )
  } else {
    const queue = new WebhookQueue({ connection, name, dedupWindowMs: label === 'none' ? 0 : 86_400_000 })
    results.push(
      await measure(
        label,
        (items) => queue.enqueueBulk(items),
        () => queue.close(),
      ),
    )
  }
}
const none = results[0].bytesPerDeliveredEvent
for (const result of results) result.beyondNone = result.bytesPerDeliveredEvent - none
console.log(JSON.stringify({ events: total, node: process.version, results }, null, 2))
raw.disconnect()
receiver.close()
