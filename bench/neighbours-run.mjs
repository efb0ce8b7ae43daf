import { createServer as createTcpServer } from 'node:net'
import { createServer } from 'node:http'
import { startRedisServer } from './redis-server.mjs'

const config = JSON.parse(process.argv[2])
const engine = config.engine ?? 'memory'

const listen = (server) =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}`)))
const sockets = new Set()
const blackHole = createTcpServer((socket) => {
  sockets.add(socket)
  socket.on('error', () => {})
  socket.on('close', () => sockets.delete(socket))
  socket.resume()
})
const slow = createServer((request, response) => {
  request.resume()
  const timer = setTimeout(() => response.end(), 4_900)
  response.on('close', () => clearTimeout(timer))
})
const bad = config.bad ? [await listen(blackHole), await listen(slow)] : [`${config.healthy}/4`, `${config.healthy}/5`]
const healthy = [1, 2, 3].map((n) => `${config.healthy}/${n}`)

const settings = {
  webhooks: [...bad, ...healthy].map((url) => ({ url })),
  mode: 'each',
  timeoutMs: 5_000,
  sharedSecret: 's3cret',
}

/** The engine under test: what sends an event, what emits 'attempt', and how it ends. */
async function startEngine() {
  if (engine === 'memory') {
    const { WebhookDestination } = await import(process.env.EVENTWIRE_WEBHOOK_ENTRY ?? 'eventwire/webhook')
    const destination = new WebhookDestination(settings)
    return {
      emitter: destination,
      send: (event) => void destination.deliver(event),
      backlog: () =>
        destination
          .backlog()
          .map(({ url, queued, retrying, inFlight, circuit }) => ({ url, queued, retrying, inFlight, circuit })),
      close: () => destination.close({ timeout: 100 }),
    }
  }
  const { WebhookQueue, WebhookWorker } = await import(process.env.EVENTWIRE_BULLMQ_ENTRY ?? 'eventwire/webhook/bullmq')
  // Without persistence: what is measured is the worker.
  const redis = await startRedisServer({ args: ['--appendonly', 'no'], signal: 'SIGKILL' })
  const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null }
  const queue = new WebhookQueue({ connection, durability: 'best-effort' })
  const worker = new WebhookWorker(settings, { connection, concurrency: 50, durability: 'best-effort' })
  for (const side of [queue, worker]) side.on('warning', () => {})
  await Promise.all([queue.ready(), worker.ready()])
  return {
    emitter: worker,
    send: (event) => void queue.enqueue(event),
    backlog: async () => [await queue.counts()],
    close: async () => {
      // The black hole's attempts are cut by destroying its sockets first (see below).
      await Promise.race([
        Promise.all([worker.close(), queue.close()]),
        new Promise((resolve) => setTimeout(resolve, 2_000)),
      ])
      await redis.stop()
    },
  }
}

const delivering = await startEngine()
/** The three healthy URLs, as results name them (normalized): paths /1, /2 and /3 of the receiver. */
const isHealthy = (url) => /\/[123]$/.test(url)
const sentAt = new Map()
const latencies = []
let lastAccepted = 0
delivering.emitter.on('attempt', (notice) => {
  if (!notice.accepted || !isHealthy(notice.url)) return
  const now = performance.now()
  latencies.push(now - sentAt.get(notice.eventId))
  lastAccepted = now
})

const started = performance.now()
const tick = 10
const perTick = (config.rate * tick) / 1000
for (let sent = 0; sent < config.events; ) {
  const due = Math.min(config.events, Math.floor(((performance.now() - started) / tick + 1) * perTick))
  for (; sent < due; sent++) {
    const eventId = `evt-${sent}`
    sentAt.set(eventId, performance.now())
    delivering.send({ type: 'track', userId: `u${sent % 1000}`, event: 'Order Completed', messageId: eventId })
  }
  await new Promise((resolve) => setTimeout(resolve, tick))
}
const expected = config.events * healthy.length
while (latencies.length < expected) await new Promise((resolve) => setTimeout(resolve, 20))

latencies.sort((a, b) => a - b)
const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]
const result = {
  engine,
  bad: Boolean(config.bad),
  healthyDeliveries: latencies.length,
  p50Ms: at(0.5),
  p99Ms: at(0.99),
  perSecond: latencies.length / ((lastAccepted - started) / 1000),
  backlog: (await delivering.backlog()).map((entry) =>
    entry.url === undefined ? entry : { ...entry, url: entry.url.replace(/^http:\/\/127\.0\.0\.1:\d+/, '') },
  ),
}
for (const socket of sockets) socket.destroy()
await delivering.close()
blackHole.close()
slow.closeAllConnections()
slow.close()
console.log(JSON.stringify(result))
process.exit(0)
