// Enqueue rate of WebhookQueue against bare BullMQ, on a Redis you start. Not part of `npm run bench`.
//
//   redis-server --port 17101 --bind 127.0.0.1 --save '' --appendonly yes --appendfsync everysec &
//   npm run build && node bench/enqueue-run.mjs --port 17101 [--events 20000] [--batch 1000] [--pairs 3]
//
// Each pair runs eventwire then the floor (or the other way round, alternating), on fresh queue
// names, with the same events: `enqueueBulk()` against `Queue.addBulk()` in batches of `--batch`,
// and `enqueue()` against `Queue.add()` with 50 calls in flight. The floor stores what a user of
// BullMQ would: `{ eventId, body: JSON.stringify(event) }` under a job id, removed on completion;
// `bullmqAddBulkSameOptions` adds eventwire's other job options (dead-letter retention and the
// de-duplication window), so the difference left is eventwire's own work.
// Redis is flushed before each run. Prints the medians (rate, client CPU, Redis CPU, and the ratio
// of client and Redis CPU together) and each run, as JSON. On a busy machine the rate moves a lot
// between runs; the CPU per event moves less.
import { parseArgs } from 'node:util'
import { Queue } from 'bullmq'
import { WebhookQueue } from 'eventwire/webhook/bullmq'
import { Redis } from 'ioredis'
import { orderProperties } from './typical-event.mjs'

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    events: { type: 'string', default: '20000' },
    batch: { type: 'string', default: '1000' },
    pairs: { type: 'string', default: '3' },
  },
})
const port = Number(values.port)
const total = Number(values.events)
const batch = Number(values.batch)
const pairs = Number(values.pairs)
const connection = { host: '127.0.0.1', port }
/** Flushes Redis before each run and reads its CPU time: the server's share of the work, which the client's wall time hides. */
const raw = new Redis(connection)
const redisCpuSeconds = async () => {
  const info = await raw.info('cpu')
  return Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1])
}

let runs = 0
const events = (run) =>
  Array.from({ length: total }, (_, index) => ({
    type: 'track',
    messageId: `r${run}-${index}`,
    userId: `user-${index % 1000}`,
    event: 'Order Completed',
    properties: orderProperties(index),
  }))

async function timed(work) {
  const redisBefore = await redisCpuSeconds()
  const started = performance.now()
  const cpu = process.cpuUsage()
  await work()
  const used = process.cpuUsage(cpu)
  const ms = performance.now() - started
  const redisUs = ((await redisCpuSeconds()) - redisBefore) * 1e6
  return {
    perSecond: Math.round(total / (ms / 1000)),
    cpuUsPerEvent: (used.user + used.system) / total,
    redisCpuUsPerEvent: redisUs / total,
  }
}

async function inFlight(count, items, job) {
  let next = 0
  await Promise.all(
    Array.from({ length: count }, async () => {
      while (next < items.length) await job(items[next++])
    }),
  )
}

/** BullMQ's addBulk of the events, in batches, each job with `options` (and `perJob(jobId)`). */
async function addBulk(options, perJob = () => ({})) {
  const run = ++runs
  const queue = new Queue(`enqueue-bench-${run}`, { connection })
  await queue.waitUntilReady()
  const all = events(run)
  const result = await timed(async () => {
    for (let start = 0; start < all.length; start += batch) {
      await queue.addBulk(
        all.slice(start, start + batch).map((event) => {
          const jobId = `evt-${event.messageId}`
          return {
            name: 'deliver',
            data: { eventId: event.messageId, body: JSON.stringify(event) },
            opts: { jobId, removeOnComplete: true, ...options, ...perJob(jobId) },
          }
        }),
      )
    }
  })
  await queue.close()
  return result
}

const scenarios = {
  async eventwireBulk() {
    const run = ++runs
    const queue = new WebhookQueue({ connection, name: `enqueue-bench-${run}` })
    await queue.ready()
    const all = events(run)
    const result = await timed(async () => {
      for (let start = 0; start < all.length; start += batch) await queue.enqueueBulk(all.slice(start, start + batch))
    })
    await queue.close()
    return result
  },
  bullmqAddBulk: () => addBulk({}),
  // The same options as eventwire's jobs: a dead-letter retention and the de-duplication window.
  bullmqAddBulkSameOptions: () =>
    addBulk({ removeOnFail: { age: 604_800, count: 100_000 } }, (jobId) => ({
      deduplication: { id: jobId, ttl: 86_400_000 },
    })),
  async eventwireOne() {
    const run = ++runs
    const queue = new WebhookQueue({ connection, name: `enqueue-bench-${run}` })
    await queue.ready()
    const all = events(run)
    const result = await timed(() => inFlight(50, all, (event) => queue.enqueue(event)))
    await queue.close()
    return result
  },
  async bullmqAdd() {
    const run = ++runs
    const queue = new Queue(`enqueue-bench-${run}`, { connection })
    await queue.waitUntilReady()
    const all = events(run)
    const result = await timed(() =>
      inFlight(50, all, (event) =>
        queue.add(
          'deliver',
          { eventId: event.messageId, body: JSON.stringify(event) },
          { jobId: `evt-${event.messageId}`, removeOnComplete: true },
        ),
      ),
    )
    await queue.close()
    return result
  },
}

const median = (numbers) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)]
const report = {}
for (const [ours, floor] of [
  ['eventwireBulk', 'bullmqAddBulk'],
  ['eventwireBulk', 'bullmqAddBulkSameOptions'],
  ['eventwireOne', 'bullmqAdd'],
]) {
  const seen = { [ours]: [], [floor]: [] }
  for (let pair = 0; pair < pairs; pair++) {
    const order = pair % 2 === 0 ? [ours, floor] : [floor, ours]
    for (const name of order) {
      await raw.flushall()
      seen[name].push(await scenarios[name]())
    }
  }
  const rate = (name) => median(seen[name].map((run) => run.perSecond))
  const cpu = (name) => median(seen[name].map((run) => run.cpuUsPerEvent))
  const redisCpu = (name) => median(seen[name].map((run) => run.redisCpuUsPerEvent))
  const both = (name) => median(seen[name].map((run) => run.cpuUsPerEvent + run.redisCpuUsPerEvent))
  report[`${ours} vs ${floor}`] = {
    eventsPerSecond: { [ours]: rate(ours), [floor]: rate(floor) },
    floorIsXFaster: Number((rate(floor) / rate(ours)).toFixed(2)),
    cpuUsPerEvent: { [ours]: Number(cpu(ours).toFixed(1)), [floor]: Number(cpu(floor).toFixed(1)) },
    redisCpuUsPerEvent: { [ours]: Number(redisCpu(ours).toFixed(1)), [floor]: Number(redisCpu(floor).toFixed(1)) },
    // Client and Redis CPU per event together: what bounds the rate on an idle machine.
    cpuRatio: Number((both(ours) / both(floor)).toFixed(2)),
    runs: seen,
  }
}
console.log(JSON.stringify({ events: total, batch, pairs, node: process.version, report }, null, 2))
raw.disconnect()
