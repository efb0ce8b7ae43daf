// What each signature scheme costs per delivery, in one process, alternating in short runs so the
// JIT, the heap and the machine are the same for all; `rounds` runs each, the median run counts.
// - sending: CPU per delivered event of a WebhookDestination whose transport answers 204 at once
//   (no network), unsigned, X-Signature, Standard Webhooks and both: the differences are signing.
// - receiving: CPU per verifyWebhook of a delivery of each scheme, beside the standardwebhooks
//   package's own verify (a peer that receivers use).
//
//   node bench/signing-run.mjs '{"events":5000,"rounds":15}'
import { Webhook as StandardWebhook } from 'standardwebhooks'
import { orderProperties } from './typical-event.mjs'

const { events, rounds } = JSON.parse(process.argv[2] ?? '{"events":5000,"rounds":15}')
const { WebhookDestination, generateStandardSecret, verifyWebhook } = await import(
  process.env.EVENTWIRE_WEBHOOK_ENTRY ?? 'eventwire/webhook'
)

/** A typical event: an order with two line items. */
const event = (index) => ({
  type: 'track',
  userId: `user-${index % 1000}`,
  event: 'Order Completed',
  properties: orderProperties(index),
})

const standardSecret = generateStandardSecret()
const schemes = {
  unsigned: {},
  'X-Signature': { sharedSecret: 's3cret-of-some-length' },
  'Standard Webhooks': { standardSecret },
  both: { sharedSecret: 's3cret-of-some-length', standardSecret },
}

/** Every request the transport saw last, by scheme: what the receiving half verifies. */
const captured = {}
const accept = { ok: true, status: 204, retryAfter: null }

async function send(name, settings) {
  const seen = []
  const destination = new WebhookDestination({
    webhooks: [{ url: 'http://127.0.0.1:9/hooks' }],
    ...settings,
    transport: {
      send: (request) => {
        if (seen.length < 100) seen.push({ headers: request.headers, body: request.body })
        return Promise.resolve(accept)
      },
    },
  })
  const before = process.cpuUsage()
  const deliveries = []
  for (let index = 0; index < events; index++) deliveries.push(destination.deliver(event(index)))
  await Promise.all(deliveries)
  const cpu = process.cpuUsage(before)
  await destination.close()
  captured[name] = seen
  return (cpu.user + cpu.system) / events
}

const receivers = {
  'X-Signature': (delivery) => verifyWebhook(delivery, { secrets: 's3cret-of-some-length' }),
  'Standard Webhooks': (delivery) => verifyWebhook(delivery, { secrets: standardSecret }),
  'Standard Webhooks, the standardwebhooks package': (delivery) => {
    new StandardWebhook(standardSecret).verify(delivery.body, delivery.headers)
    return { ok: true }
  },
}

async function receive(name, verify) {
  const deliveries = captured[name.startsWith('Standard') ? 'Standard Webhooks' : name]
  // The deliveries were signed seconds ago: within every tolerance.
  const before = process.cpuUsage()
  for (let index = 0; index < events; index++) {
    const verified = await verify(deliveries[index % deliveries.length])
    if (!verified.ok) throw new Error(`${name}: ${JSON.stringify(verified)}`)
  }
  const cpu = process.cpuUsage(before)
  return (cpu.user + cpu.system) / events
}

const sending = Object.fromEntries(Object.keys(schemes).map((name) => [name, []]))
const receiving = Object.fromEntries(Object.keys(receivers).map((name) => [name, []]))
for (let round = 0; round < rounds; round++) {
  for (const [name, settings] of Object.entries(schemes)) sending[name].push(await send(name, settings))
  for (const [name, verify] of Object.entries(receivers)) receiving[name].push(await receive(name, verify))
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const medians = (samples) => Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, median(values)]))
console.log(
  JSON.stringify({
    events,
    rounds,
    sendCpuMicrosPerEvent: medians(sending),
    verifyCpuMicrosPerDelivery: medians(receiving),
  }),
)
