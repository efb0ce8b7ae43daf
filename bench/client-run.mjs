// One client scenario for one library, in a fresh process so that its CPU and peak RSS are its
// own. Prints one JSON line: { wallMs, cpuMs, peakRssMb }. The wall time ends when the sink has
// acknowledged every event.
//
//   node bench/client-run.mjs '{"library":"eventwire","mode":"burst","events":100000,"sink":"http://127.0.0.1:PORT"}'
import { libraries } from './libraries.mjs'

const { library, mode, events, sink, rate, pad } = JSON.parse(process.argv[2])
const client = await libraries[library](sink)
const padding = pad ? 'x'.repeat(pad) : undefined
const properties = (index) =>
  padding ? { index, sku: `SKU-${index}`, price: 9.99, padding } : { index, sku: `SKU-${index}`, price: 9.99 }

const cpuBefore = process.cpuUsage()
const started = performance.now()
if (mode === 'steady') {
  // `rate` events per second, in ticks of 10 ms, until `events` were sent.
  const perTick = Math.max(1, Math.round(rate / 100))
  await new Promise((resolve) => {
    let index = 0
    const timer = setInterval(() => {
      for (let tick = 0; tick < perTick && index < events; tick++, index++) client.send(index, properties(index))
      if (index >= events) {
        clearInterval(timer)
        resolve()
      }
    }, 10)
  })
} else if (mode === 'backpressure') {
  for (let index = 0; index < events; index++) {
    if (client.send(index, properties(index)) === false) await client.waitForRoom()
  }
} else {
  for (let index = 0; index < events; index++) client.send(index, properties(index))
}
await client.finish()
// Done means acknowledged by the sink: some libraries resolve their flush before the last
// responses arrive, so wait until the sink has counted every event (or stops making progress).
for (let last = -1, still = 0; still < 100; ) {
  const { events: seen } = await (await fetch(`${sink}/stats`)).json()
  if (seen >= events) break
  still = seen === last ? still + 1 : 0
  last = seen
  await new Promise((resolve) => setTimeout(resolve, 20))
}
const wallMs = performance.now() - started
const cpu = process.cpuUsage(cpuBefore)
console.log(
  JSON.stringify({ wallMs, cpuMs: (cpu.user + cpu.system) / 1000, peakRssMb: process.resourceUsage().maxRSS / 1024 }),
)
process.exit(0)
