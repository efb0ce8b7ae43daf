// Redis bytes per event kept for replay (the worker option keepSent), on a Redis you start. Not
// part of `npm run bench`.
//
//   redis-server --port 17105 --bind 127.0.0.1 --save '' &
//   npm run build && node bench/kept-bytes.mjs --port 17105 [--destinations 10] [--events 10000]
//
// On a flushed Redis, for each body size, `--destinations` destinations each get one URL, and a
// worker in this process with `keepSent: true` (the newest 1,000 per destination) delivers
// `--events` events spread over them (each a 36-character messageId, its properties padded to the
// size) to a receiver on 127.0.0.1 that answers 200. Once the worker has closed, the kept streams
// are summed with `MEMORY USAGE key SAMPLES 0` and divided by their entries (XLEN); less the
// bodies' own bytes, that is what keeping costs beside the body.
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import { parseArgs } from 'node:util'
import { toWebhookPayload } from 'eventwire/webhook'
import { WebhookQueue, WebhookWorker } from 'eventwire/webhook/bullmq'
import { Redis } from 'ioredis'

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    destinations: { type: 'string', default: '10' },
    events: { type: 'string', default: '10000' },
  },
})
const port = Number(values.port)
const destinations = Number(values.destinations)
const events = Number(values.events)
const raw = new Redis({ host: '127.0.0.1', port })
const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null }

const eventOf = (pad) => ({
  type: 'track',
  userId: 'u1',
  event: 'Paid',
  messageId: randomUUID(),
  timestamp: '2026-11-28T12:00:00.000Z',
  properties: { note: 'x'.repeat(pad) },
})

async function run(name, pad) {
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => response.writeHead(200).end())
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const receiverPort = server.address().port
  const queue = new WebhookQueue({ connection, name, durability: 'best-effort' })
  const worker = new WebhookWorker({}, { connection, name, durability: 'best-effort', concurrency: 50, keepSent: true })
  for (const emitter of [queue, worker]) emitter.on('warning', () => undefined)
  const ids = Array.from({ length: destinations }, (_, index) => `customer-${String(index).padStart(5, '0')}`)
  for (const id of ids) await queue.destinations.set({ id, webhooks: [{ url: `http://127.0.0.1:${receiverPort}/in` }] })
  let delivered = 0
  const done = new Promise((resolve) =>
    worker.on('delivered', () => {
      if (++delivered === events) resolve()
    }),
  )
  const bodyBytes = Buffer.byteLength(JSON.stringify(toWebhookPayload(eventOf(pad))))
  for (let index = 0; index < events; index += 100) {
    await queue.enqueueBulk(
      Array.from({ length: Math.min(100, events - index) }, () => eventOf(pad)),
      { destination: ids[(index / 100) % destinations] },
    )
  }
  await done
  await worker.close()
  await queue.close()
  server.close()
  let bytes = 0
  let entries = 0
  for (const id of ids) {
    const key = `bull:${name}:sent:${id}`
    bytes += Number(await raw.memory('USAGE', key, 'SAMPLES', 0))
    entries += await raw.xlen(key)
  }
  const perEntry = Math.round(bytes / entries)
  return { bodyBytes, entries, bytesPerEntry: perEntry, besideBody: perEntry - bodyBytes }
}

await raw.flushall()
const results = []
for (const pad of [0, 800, 4_800]) results.push(await run(`kept-bytes-${pad}`, pad))
console.log(JSON.stringify({ destinations, events, results }))
raw.disconnect()
