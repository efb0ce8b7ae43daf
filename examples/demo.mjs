// The main job, end to end on this machine: starts a local ingest sink on 127.0.0.1, sends real
// batches to it with eventwire's Client, and prints what arrived.
//
//   npm install && npm run demo
import { createServer } from 'node:http'
import { Client } from 'eventwire'

const received = []
const sink = createServer((request, response) => {
  let body = ''
  request.setEncoding('utf8')
  request.on('data', (chunk) => (body += chunk))
  request.on('end', () => {
    received.push({ path: request.url, auth: request.headers.authorization, bytes: Buffer.byteLength(body), body: JSON.parse(body) })
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}')
  })
})
await new Promise((resolve) => sink.listen(0, '127.0.0.1', resolve))
const endpoint = `http://127.0.0.1:${sink.address().port}`
console.log(`sink listening on ${endpoint}`)

const client = new Client('demo-write-key', { endpoint })
client.on('error', (error) => console.error(`error ${error.code}: ${error.message}`))
client.on('sent', (info) => console.log(`batch ${info.batchId}: ${info.messages.length} message(s), ${info.bytes} bytes, HTTP ${info.status}`))

// The alias sequence of the spec: calls under the previous id, alias, identify, calls under the new id.
client.page({ anonymousId: 'anon-42', name: 'Pricing', category: 'Marketing', properties: { path: '/pricing', title: 'Pricing' } })
client.track({ anonymousId: 'anon-42', event: 'Plan Selected', properties: { plan: 'pro' } })
client.alias({ previousId: 'anon-42', userId: 'user-42' })
client.identify({ userId: 'user-42', traits: { email: 'ada@example.com', plan: 'pro' } })
client.group({ userId: 'user-42', groupId: 'acme', traits: { name: 'Acme Inc', employees: 20 } })
client.screen({ userId: 'user-42', name: 'Dashboard' })

// A burst: batches grow while requests are in flight, each body within 500 KB.
const burst = 10_000
for (let index = 0; index < burst; index++) {
  client.track({ userId: `user-${index % 100}`, event: 'Item Viewed', properties: { index, sku: `SKU-${index}` } })
}
await client.close()
sink.close()

const messages = received.flatMap((request) => request.body.batch)
const byType = {}
for (const message of messages) byType[message.type] = (byType[message.type] ?? 0) + 1
console.log('\nwhat arrived:')
console.log(`  requests  ${received.length} to ${[...new Set(received.map((r) => r.path))].join(', ')}`)
console.log(`  auth      ${[...new Set(received.map((r) => r.auth))].join(', ')}`)
console.log(`  largest   ${Math.max(...received.map((r) => r.bytes))} bytes`)
for (const [type, count] of Object.entries(byType)) console.log(`  ${type.padEnd(9)} ${count}`)
console.log('\nfirst message as sent:')
console.log(JSON.stringify(messages[0], null, 2))

const expected = burst + 6
if (messages.length !== expected) {
  console.error(`\nexpected ${expected} messages, got ${messages.length}`)
  process.exit(1)
}
console.log(`\nall ${expected} messages arrived`)
