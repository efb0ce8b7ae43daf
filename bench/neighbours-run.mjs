// Bad neighbours, in a fresh process. Prints one JSON line.
//
//   node bench/neighbours-run.mjs '{"bad":true,"healthy":"http://127.0.0.1:PORT/in","events":20000,"rate":2000}'
//
// One WebhookDestination, mode 'each', five URLs. With `bad`, the first is black-holed (accepts
// the connection, never answers) and the second answers after 4.9 s (timeoutMs 5,000); without,
// both are healthy too. The three others are always the healthy receiver (another process). The
// producer offers `rate` events/s; for the three healthy URLs it reports the latency from
// deliver() to their 2xx (p50, p99) and their deliveries per second until the last one arrived.
import { createServer as createTcpServer } from 'node:net'
import { createServer } from 'node:http'

const config = JSON.parse(process.argv[2])
const webhookEntry = process.env.EVENTWIRE_WEBHOOK_ENTRY ?? 'eventwire/webhook'
const { WebhookDestination } = await import(webhookEntry)

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

const destination = new WebhookDestination({
  webhooks: [...bad, ...healthy].map((url) => ({ url })),
  mode: 'each',
  timeoutMs: 5_000,
  sharedSecret: 's3cret',
})
const healthyUrls = new Set(destination.urls.slice(2))
const sentAt = new Map()
const latencies = []
let lastAccepted = 0
destination.on('attempt', (notice) => {
  if (!notice.accepted || !healthyUrls.has(notice.url)) return
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
    void destination.deliver({ type: 'track', userId: `u${sent % 1000}`, event: 'Order Completed', messageId: eventId })
  }
  await new Promise((resolve) => setTimeout(resolve, tick))
}
const expected = config.events * healthy.length
while (latencies.length < expected) await new Promise((resolve) => setTimeout(resolve, 20))

latencies.sort((a, b) => a - b)
const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]
const result = {
  bad: Boolean(config.bad),
  healthyDeliveries: latencies.length,
  p50Ms: at(0.5),
  p99Ms: at(0.99),
  perSecond: latencies.length / ((lastAccepted - started) / 1000),
  backlog: destination.backlog().map(({ url, queued, retrying, inFlight, circuit }) => ({
    url: url.replace(/^http:\/\/127\.0\.0\.1:\d+/, ''),
    queued,
    retrying,
    inFlight,
    circuit,
  })),
}
await destination.close({ timeout: 100 })
for (const socket of sockets) socket.destroy()
blackHole.close()
slow.closeAllConnections()
slow.close()
console.log(JSON.stringify(result))
process.exit(0)
