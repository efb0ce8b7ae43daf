// The bench's webhook receiver, in a process of its own: answers every POST with the status given
// as its first argument (default 200). Prints its port.
//
// With `count` as its second argument it also counts requests and unique `webhook-id` headers and
// remembers when the last new id arrived (epoch ms): GET /_stats reports them, DELETE /_stats starts
// over. The durable bench reads its wall time from there, since its workers are other processes.
//
// With `tls` as its third argument it speaks HTTPS with the test certificate for 127.0.0.1
// (test/fixtures/tls/self-signed.*): its senders trust it through NODE_EXTRA_CA_CERTS.
import { readFileSync } from 'node:fs'
import { createServer as createHttpServer } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'

const status = Number(process.argv[2] ?? 200)
const counting = process.argv[3] === 'count'
const fixture = (name) => readFileSync(new URL(`../test/fixtures/tls/self-signed.${name}`, import.meta.url))
const createServer = (handle) =>
  process.argv[4] === 'tls'
    ? createHttpsServer({ key: fixture('key'), cert: fixture('pem') }, handle)
    : createHttpServer(handle)
let requests = 0
let ids = new Set()
let lastNewAt = 0

const server = createServer((request, response) => {
  if (counting && request.url === '/_stats') {
    request.resume()
    if (request.method === 'DELETE') {
      requests = 0
      ids = new Set()
      lastNewAt = 0
    }
    response.end(JSON.stringify({ requests, unique: ids.size, lastNewAt }))
    return
  }
  if (counting) {
    requests++
    const id = request.headers['webhook-id']
    if (id !== undefined && !ids.has(id)) {
      ids.add(id)
      lastNewAt = performance.timeOrigin + performance.now()
    }
  }
  request.resume()
  request.on('end', () => {
    response.writeHead(status)
    response.end()
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => console.log(server.address().port))
