// What gzip costs per batch body, by size: the CPU and the bytes saved of the compression the
// client uses (node:zlib at level 1 on the thread pool on Node; CompressionStream elsewhere,
// measured here on Node too for scale). Bodies are batches of the typical event; `rounds`
// alternating runs each, the median counts. What `compressionThreshold`'s default rests on.
//
//   node bench/gzip-run.mjs '{"rounds":7}'
import { gzip } from 'node:zlib'
import { orderProperties } from './typical-event.mjs'

const { rounds } = JSON.parse(process.argv[2] ?? '{"rounds":7}')

const message = (index) =>
  JSON.stringify({
    type: 'track',
    userId: `user-${index}`,
    event: 'Order Completed',
    properties: orderProperties(index),
    messageId: crypto.randomUUID(),
    timestamp: new Date().toISOString(),
  })
const body = (count) =>
  `{"batch":[${Array.from({ length: count }, (_, index) => message(index)).join(',')}],"context":{"library":{"name":"eventwire","version":"0.1.0"}},"messageId":"${crypto.randomUUID()}","sentAt":"${new Date().toISOString()}"}`

const zlibLevel1 = (text) =>
  new Promise((resolve, reject) => gzip(text, { level: 1 }, (error, bytes) => (error ? reject(error) : resolve(bytes))))
const compressionStream = (text) =>
  new Response(new Blob([text]).stream().pipeThrough(new CompressionStream('gzip'))).arrayBuffer()

const compressors = { 'node:zlib level 1': zlibLevel1, CompressionStream: compressionStream }
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

const rows = []
for (const count of [1, 2, 3, 5, 20, 100, 1_200]) {
  const text = body(count)
  const jsonBytes = Buffer.byteLength(text)
  // About 2 MB of JSON per run, at least 20 bodies.
  const bodies = Math.max(20, Math.round(2_000_000 / jsonBytes))
  const samples = Object.fromEntries(Object.keys(compressors).map((name) => [name, []]))
  const sizes = {}
  for (let round = 0; round < rounds + 1; round++) {
    for (const [name, compress] of Object.entries(compressors)) {
      const before = process.cpuUsage()
      let out
      for (let index = 0; index < bodies; index++) out = await compress(text)
      const used = process.cpuUsage(before)
      sizes[name] = out.byteLength
      // The first round warms up.
      if (round > 0) samples[name].push((used.user + used.system) / bodies)
    }
  }
  for (const name of Object.keys(compressors)) {
    rows.push({ compressor: name, events: count, jsonBytes, gzipBytes: sizes[name], cpuMicros: median(samples[name]) })
  }
}
console.log(JSON.stringify({ rows }))
