// What the disk queue costs: the in-memory Client against DurableClient (eventwire/disk-queue), in
// one run, each in a fresh process (client-run.mjs) sending a steady 20,000 events/s for 10 s to
// the bench's sink, alternated `--pairs` times; the median CPU per 1,000 events and peak RSS of
// each. Then the bytes one message takes on disk: `--bytes-events` typical events queued with the
// endpoint down, the directory's size over their number, beside their JSON. Prints a table and one
// JSON line.
//
//   npm run build && node bench/disk-queue-cost.mjs
//   node bench/disk-queue-cost.mjs --pairs 5 --events 200000
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { orderProperties } from './typical-event.mjs'

const { values } = parseArgs({
  options: {
    pairs: { type: 'string', default: '3' },
    events: { type: 'string', default: '200000' },
    rate: { type: 'string', default: '20000' },
    'bytes-events': { type: 'string', default: '10000' },
  },
})
const here = import.meta.dirname
const pairs = Number(values.pairs)
const events = Number(values.events)
const rate = Number(values.rate)

const sink = spawn(process.execPath, [join(here, 'sink.mjs')], { stdio: ['ignore', 'pipe', 'inherit'] })
const port = await new Promise((resolve) => sink.stdout.once('data', (chunk) => resolve(Number(String(chunk).trim()))))
const url = `http://127.0.0.1:${port}`

function run(library) {
  const output = execFileSync(
    process.execPath,
    [join(here, 'client-run.mjs'), JSON.stringify({ library, mode: 'steady', rate, events, sink: url })],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 900_000 },
  )
  return JSON.parse(output.trim().split('\n').pop())
}

const samples = { eventwire: [], 'eventwire disk': [] }
for (let pair = 0; pair < pairs; pair++) {
  for (const library of Object.keys(samples)) {
    await fetch(`${url}/reset`, { method: 'POST' })
    const sample = run(library)
    const { events: seen, unique } = await (await fetch(`${url}/stats`)).json()
    if (seen !== events || unique !== events) throw new Error(`${library}: the sink saw ${unique} of ${events} events`)
    samples[library].push({ ...sample, cpuMsPer1000: (sample.cpuMs / events) * 1000 })
  }
}
sink.kill()

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]
const summary = Object.fromEntries(
  Object.entries(samples).map(([library, list]) => [
    library,
    {
      cpuMsPer1000: Number(median(list.map((sample) => sample.cpuMsPer1000)).toFixed(2)),
      peakRssMb: Number(median(list.map((sample) => sample.peakRssMb)).toFixed(1)),
      cpuMsPer1000Each: list.map((sample) => Number(sample.cpuMsPer1000.toFixed(2))),
    },
  ]),
)
const cpuRatio = summary['eventwire disk'].cpuMsPer1000 / summary.eventwire.cpuMsPer1000

// Bytes on disk per message: the endpoint down (a port nothing listens on), nothing acknowledged.
const { DurableClient } = await import(process.env.EVENTWIRE_DISK_QUEUE ?? 'eventwire/disk-queue')
const directory = mkdtempSync(join(tmpdir(), 'eventwire-bench-bytes-'))
const client = new DurableClient('bench-key', {
  endpoint: 'http://127.0.0.1:9',
  logger: { log: () => undefined, error: () => undefined },
  disk: { directory },
})
const count = Number(values['bytes-events'])
for (let index = 0; index < count; index++) {
  const message = { userId: `user-${index % 1000}`, event: 'Order Completed', properties: orderProperties(index) }
  client.track(message, () => undefined)
}
const diskBytes = readdirSync(directory).reduce((sum, name) => sum + statSync(join(directory, name)).size, 0)
// The wire JSON of one such message, for comparison: what the client sends.
const { checkMessage } = await import(process.env.EVENTWIRE_ENTRY ?? 'eventwire')
const wireBytes = Buffer.byteLength(
  JSON.stringify(checkMessage('track', { userId: 'user-1', event: 'Order Completed', properties: orderProperties(1) })),
)
await client.close({ timeout: 0 })
rmSync(directory, { recursive: true, force: true })

const result = {
  date: new Date().toISOString(),
  node: process.version,
  rate,
  events,
  pairs,
  ...summary,
  cpuRatio: Number(cpuRatio.toFixed(2)),
  diskBytesPerMessage: Number((diskBytes / count).toFixed(1)),
  wireJsonBytesPerMessage: wireBytes,
}
console.error(`steady ${rate} events/s, ${events} events, median of ${pairs}:`)
for (const library of Object.keys(samples)) {
  console.error(
    `  ${library.padEnd(15)} ${summary[library].cpuMsPer1000} ms CPU per 1k events, ${summary[library].peakRssMb} MB peak RSS`,
  )
}
console.error(
  `  CPU ratio ${result.cpuRatio}x; on disk ${result.diskBytesPerMessage} bytes per message (wire JSON ${wireBytes})`,
)
console.log(JSON.stringify(result))
