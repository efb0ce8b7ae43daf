// A producer that honours the client's backpressure: one million events, memory stays bounded.
//
//   npm run build && node examples/backpressure.mjs
import { createServer } from 'node:http'
import { Client } from 'eventwire'

let delivered = 0
const sink = createServer((request, response) => {
  let body = ''
  request.setEncoding('utf8')
  request.on('data', (chunk) => (body += chunk))
  request.on('end', () => {
    delivered += JSON.parse(body).batch.length
    response.end('{}')
  })
})
await new Promise((resolve) => sink.listen(0, '127.0.0.1', resolve))

const client = new Client('write-key', { endpoint: `http://127.0.0.1:${sink.address().port}`, maxQueueSize: 50_000 })
client.on('error', (error) => console.error(error.code, error.message))

let waits = 0
let peakRss = 0
for (let index = 0; index < 1_000_000; index++) {
  if (!client.track({ userId: `user-${index % 1000}`, event: 'Tick', properties: { index } })) {
    // The queue is half full: let it drain to a quarter before producing more.
    waits++
    peakRss = Math.max(peakRss, process.memoryUsage().rss)
    await client.whenDrained()
  }
}
await client.close()
sink.close()
console.log(
  `delivered ${delivered} events, waited for 'drain' ${waits} times, peak RSS ${Math.round(peakRss / 1e6)} MB`,
)
