// Redis bytes per destination in the registry, on a Redis you start. Not part of `npm run bench`.
//
//   redis-server --port 17103 --bind 127.0.0.1 --save '' &
//   npm run build && node bench/destination-bytes.mjs --port 17103 [--destinations 10000]
//
// On a flushed Redis, `--destinations` destinations are set through `queue.destinations.set()`,
// each with one URL of 49 characters, one static header and a 32-character shared secret: a
// typical customer. Redis's `used_memory` before and after gives the bytes each one takes (its
// JSON in the registry's hash, and its entry in the list of changes). Then the same number are
// deleted: what the changes list keeps of a deleted id.
import { parseArgs } from 'node:util'
import { WebhookQueue } from 'eventwire/webhook/bullmq'
import { Redis } from 'ioredis'

const { values } = parseArgs({
  options: { port: { type: 'string' }, destinations: { type: 'string', default: '10000' } },
})
const port = Number(values.port)
const count = Number(values.destinations)
const raw = new Redis({ host: '127.0.0.1', port })
await raw.flushall()
const queue = new WebhookQueue({
  connection: { host: '127.0.0.1', port },
  name: 'destination-bytes',
  durability: 'best-effort',
})
queue.on('warning', () => undefined)
const used = async () => Number(/used_memory:(\d+)/.exec(await raw.info('memory'))?.[1])
const destination = (index) => ({
  id: `customer-${String(index).padStart(5, '0')}`,
  webhooks: [
    {
      url: `https://hooks.customer-${String(index).padStart(5, '0')}.example.com/in`,
      headers: { 'X-Customer': `c${index}` },
    },
  ],
  sharedSecret: 's'.repeat(32),
})
// One first, so that the keys themselves exist.
await queue.destinations.set(destination(count))
const before = await used()
for (let index = 0; index < count; index++) await queue.destinations.set(destination(index))
const stored = await used()
for (let index = 0; index < count; index++) await queue.destinations.delete(destination(index).id)
const deleted = await used()
const json = await raw.hget('bull:destination-bytes:destinations', destination(count).id)
console.log(
  JSON.stringify({
    destinations: count,
    bytesPerDestination: Math.round((stored - before) / count),
    jsonBytes: Buffer.byteLength(json ?? ''),
    bytesPerDeletedId: Math.round((deleted - before) / count),
  }),
)
await queue.close()
raw.disconnect()
