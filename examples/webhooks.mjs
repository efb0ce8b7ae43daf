// Webhooks end to end on this machine: the Express receiver of receiver-express.mjs on 127.0.0.1,
// a WebhookDestination sending it every payload type signed, an audience sync, and one forged
// request that the receiver turns away.
//
//   npm run build && node examples/webhooks.mjs
import { AudienceSync, WebhookDestination } from 'eventwire/webhook'
import { createReceiver } from './receiver-express.mjs'

const secret = 's3cret'
const received = []
const server = createReceiver(secret, (event) => received.push(event)).listen(0, '127.0.0.1')
await new Promise((resolve) => server.once('listening', resolve))
const url = `http://127.0.0.1:${server.address().port}/webhooks`

const destination = new WebhookDestination({ webhooks: [{ url, headers: { 'X-Team': 'data' } }], sharedSecret: secret })
destination.on('retry', (notice) => console.log(`retry ${notice.url}: ${notice.error.code}`))

const events = [
  {
    type: 'page',
    userId: 'u1',
    properties: {
      path: '/pricing',
      title: 'Pricing',
      url: 'https://example.com/pricing',
      referrer: 'https://search.example/',
    },
  },
  {
    type: 'screen',
    userId: 'u1',
    name: 'Dashboard',
    context: {
      device: { model: 'Pixel', type: 'android' },
      os: { name: 'Android', version: '15' },
      app: { build: '42', name: 'Shop', version: '2.1' },
    },
  },
  { type: 'identify', userId: 'u1', traits: { email: 'ada@example.com', plan: 'pro' } },
  { type: 'track', userId: 'u1', event: 'Order Completed', properties: { total: 42.5 } },
  { type: 'alias', previousId: 'anon-1', userId: 'u1' },
  { type: 'group', userId: 'u1', groupId: 'acme', traits: { employees: 20 } },
  { type: 'delete', userId: 'u1' },
  { type: 'track', userId: 'u1', event: 'Internal Only', integrations: { All: false } },
  ...new AudienceSync('Big Spenders').sync(['u1', 'u2', 'u3']),
]
for (const event of events) {
  const result = await destination.deliver(event)
  console.log(`${event.type.padEnd(8)} ${result.status.padEnd(9)} attempts ${result.attempts}`)
}

const forged = await fetch(url, {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-signature': '0'.repeat(40) },
  body: '{"type":"track"}',
})
console.log(`forged request answered HTTP ${forged.status}`)

await destination.close()
server.close()
console.log(`receiver verified ${received.length} events`)
if (received.length !== events.length - 1 || forged.status !== 401) process.exit(1)
