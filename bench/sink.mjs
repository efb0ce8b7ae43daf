// The bench's ingest sink, in a process of its own: accepts /v1/batch (eventwire, Segment,
// RudderStack, the floor) and /batch/ (PostHog, gzip), counts events and unique message ids, and
// reports them at GET /stats with the bytes that came on the wire and the JSON they carried (POST
// /reset starts over). Prints its port.
import { createServer } from 'node:http'
import { gunzipSync } from 'node:zlib'

let events = 0
let requests = 0
let ids = new Set()
let wireBytes = 0
let jsonBytes = 0

const server = createServer((request, response) => {
  const chunks = []
  request.on('data', (chunk) => chunks.push(chunk))
  request.on('end', () => {
    if (request.url === '/stats') {
      response.end(JSON.stringify({ events, requests, unique: ids.size, wireBytes, jsonBytes }))
      return
    }
    if (request.url === '/reset') {
      events = 0
      requests = 0
      ids = new Set()
      wireBytes = 0
      jsonBytes = 0
      response.end('{}')
      return
    }
    let body
    try {
      const wire = Buffer.concat(chunks)
      const raw = request.headers['content-encoding'] === 'gzip' ? gunzipSync(wire) : wire
      body = JSON.parse(raw.toString('utf8'))
      wireBytes += wire.length
      jsonBytes += raw.length
    } catch {
      // A library's malformed body is its failure to count, not the end of the run.
      response.writeHead(400).end()
      return
    }
    const batch = body.batch ?? []
    requests++
    events += batch.length
    for (const message of batch) ids.add(message.messageId ?? message.uuid)
    response.writeHead(200, { 'content-type': 'application/json' })
    response.end('{"status":"Ok"}')
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => console.log(server.address().port))
