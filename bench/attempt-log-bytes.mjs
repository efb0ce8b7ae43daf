// Redis bytes per entry of the attempt log, on a Redis you start. Not part of `npm run bench`.
//
//   redis-server --port 17104 --bind 127.0.0.1 --save '' &
//   npm run build && node bench/attempt-log-bytes.mjs --port 17104 [--destinations 10] [--events 10000]
//
// On a flushed Redis, `--destinations` destinations each get one URL of 49 characters, and a
// worker in this process delivers `--events` events spread over them (each a 36-character
// messageId) to a receiver on 127.0.0.1 that answers 200, with the default attemptLog (the
// newest 200 per destination). Once the worker has closed, the log's streams are summed with
// `MEMORY USAGE key SAMPLES 0` and divided by their entries (XLEN). Then a second run with every
// tenth request answered 503 once shows entries that carry an error.
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import { parseArgs } from 'node:util'
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

async function run(name, failEvery) {
  let seen = 0
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      seen++
      response.writeHead(failEvery > 0 && seen % failEvery === 0 ? 503 : 200).end()
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const receiverPort = server.address().port
  const queue = new WebhookQueue({ connection, name, durability: 'best-effort' })
  const worker = new WebhookWorker(
    { backoff: () => 10 },
    { connection, name, durability: 'best-effort', concurrency: 50 },
  )
  for (const emitter of [queue, worker]) emitter.on('warning', () => undefined)
  const ids = Array.from({ length: destinations }, (_, index) => `customer-${String(index).padStart(5, '0')}`)
  for (const id of ids) {
    // 49 characters, as in destination-bytes.mjs; the port keeps it on this machine.
    const url = `http://127.0.0.1:${receiverPort}/hooks/${id}/in`.padEnd(49, 'x')
    await queue.destinations.set({ id, webhooks: [{ url }] })
  }
  let delivered = 0
  const done = new Promise((resolve) =>
    worker.on('delivered', () => {
      if (++delivered === events) resolve()
    }),
  )
  for (let index = 0; index < events; index += 100) {
    await Promise.all(
      Array.from({ length: Math.min(100, events - index) }, (_, offset) =>
        queue.enqueue(
          { type: 'track', userId: 'u1', event: 'Paid', messageId: randomUUID() },
          { destination: ids[(index + offset) % destinations] },
        ),
      ),
    )
  }
  await done
  await worker.close()
  await queue.close()
  server.close()
  let bytes = 0
  let entries = 0
  for (const id of ids) {
    const key = `bull:${name}:attempts:${id}`
    bytes += Number(await raw.memory('USAGE', key, 'SAMPLES', 0))
    entries += await raw.xlen(key)
  }
  return { entries, bytesPerEntry: Math.round(bytes / entries) }
}

await raw.flushall()
const accepted = await run('attempt-log-bytes', 0)
const withErrors = await run('attempt-log-bytes-errors', 10)
console.log(JSON.stringify({ destinations, events, accepted, everyTenthFailedOnce: withErrors }))
raw.disconnect()
