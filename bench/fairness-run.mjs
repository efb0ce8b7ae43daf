// Fairness between destinations on the durable engine: does one destination's backlog hold up
// another's events? One redis-server (AOF on, fsync every second), one receiver process, `workers`
// WebhookWorker processes serving the registry (destinations `big` and `small`, each one URL on
// the receiver). `small` gets `smallRate` events a second, each stamped with when it was enqueued;
// the receiver notes when each arrives. Its enqueue-to-receiver latency is measured three ways,
// `seconds` each:
// - alone: nothing else is sent;
// - busy: `big` is sent a steady `busyShare` of the rate the workers delivered its backlog at, so
//   the workers are as busy but nothing piles up;
// - backlog: `big` has `backlog` events enqueued before the workers start.
// Prints progress on stderr and one JSON line on stdout: each phase's latency percentiles (ms),
// `big`'s delivery rate, and the backlog phase's p99 over the busy and alone ones.
//
//   node bench/fairness-run.mjs '{"backlog":1000000}'
//   EVENTWIRE_BULLMQ_ENTRY=/path/to/other/dist/webhook-bullmq.js node bench/fairness-run.mjs '{"backlog":50000}'
import { spawn } from 'node:child_process'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { epochMs, event, log, measurePhase, report, round, sleep, steadily } from './fairness-phase.mjs'
import { startRedisServer } from './redis-server.mjs'

const config = JSON.parse(process.argv[2] ?? '{}')
const here = import.meta.dirname
const nodeArgs = process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : []
const bullmqEntry = process.env.EVENTWIRE_BULLMQ_ENTRY ?? 'eventwire/webhook/bullmq'
const NAME = 'fairness'

/**
 * The receiver: answers 200, at once or, for `big`, after `bigDelayMs` (a receiver slower than its
 * events come, which is how a backlog forms); counts `big`'s requests and keeps each `small` event's latency.
 */
function receiverRole({ bigDelayMs = 0 }) {
  let big = 0
  let latencies = []
  const server = createServer((request, response) => {
    if (request.url === '/_stats') {
      request.resume()
      response.end(JSON.stringify({ big, latencies }))
      if (request.method === 'DELETE') latencies = []
      return
    }
    const chunks = []
    request.on('data', (chunk) => chunks.push(chunk))
    request.on('end', () => {
      const arrived = epochMs()
      const answer = () => {
        response.writeHead(200)
        response.end()
      }
      if (request.url === '/big') {
        big++
        if (bigDelayMs > 0) setTimeout(answer, bigDelayMs)
        else answer()
        return
      }
      latencies.push(arrived - JSON.parse(Buffer.concat(chunks).toString()).properties.at)
      answer()
    })
  })
  server.keepAliveTimeout = 60_000
  server.listen(0, '127.0.0.1', () => process.send({ type: 'ready', port: server.address().port }))
}

/** A worker serving the registry. */
async function workerRole({ redisPort }) {
  const { WebhookWorker } = await import(bullmqEntry)
  const worker = new WebhookWorker(
    {},
    { connection: { host: '127.0.0.1', port: redisPort, maxRetriesPerRequest: null }, name: NAME },
  )
  worker.on('error', (error) => log(`worker: ${error.message}`))
  await worker.ready()
  process.send({ type: 'ready' })
  process.on('message', async (command) => {
    if (command !== 'stop') return
    await worker.close()
    process.exit(0)
  })
}

function child(role) {
  const spawned = spawn(process.execPath, [...nodeArgs, join(here, 'fairness-run.mjs'), JSON.stringify(role)], {
    stdio: ['ignore', 2, 'inherit', 'ipc'],
  })
  const ready = new Promise((resolve, reject) => {
    spawned.on('message', (message) => message?.type === 'ready' && resolve(message))
    spawned.once('exit', (code) => reject(new Error(`${role.role} exited with ${code}`)))
  })
  return { process: spawned, ready }
}

async function main() {
  const workers = config.workers ?? 4
  const seconds = config.seconds ?? 15
  const smallRate = config.smallRate ?? 20
  const backlog = config.backlog ?? 100_000
  const busyShare = config.busyShare ?? 0.7
  const server = await startRedisServer({ args: ['--appendonly', 'yes', '--appendfsync', 'everysec'] })
  const redisPort = server.port
  log(`redis-server on port ${redisPort}`)
  const connection = { host: '127.0.0.1', port: redisPort, maxRetriesPerRequest: null }
  const receiver = child({ role: 'receiver' })
  const { port } = await receiver.ready
  const url = `http://127.0.0.1:${port}`
  const stats = async (method = 'GET') => (await fetch(`${url}/_stats`, { method })).json()
  const { WebhookQueue } = await import(bullmqEntry)
  const { Redis } = await import('ioredis')
  /** A queue on an empty Redis with the two destinations. */
  async function freshQueue() {
    const cleaner = new Redis(connection)
    await cleaner.flushall()
    cleaner.disconnect()
    const created = new WebhookQueue({ connection, name: NAME })
    await created.ready()
    for (const id of ['big', 'small']) await created.destinations.set({ id, webhooks: [{ url: `${url}/${id}` }] })
    return created
  }
  async function startFleet() {
    const fleet = Array.from({ length: workers }, () => child({ role: 'worker', redisPort }))
    await Promise.all(fleet.map((worker) => worker.ready))
    return fleet
  }
  async function stopFleet(fleet) {
    for (const worker of fleet) worker.process.send('stop')
    await Promise.all(fleet.map((worker) => new Promise((resolve) => worker.process.once('exit', resolve))))
  }
  let queue = await freshQueue()
  let sent = 0
  /** A phase of `small`'s stream, each event stamped with when it was enqueued. */
  const phase = (name, during) =>
    measurePhase({
      name,
      seconds,
      smallRate,
      stats,
      send: (at) => queue.enqueue(event(`small-${sent++}`, { at }), { destination: 'small' }),
      during,
      settle: () => sleep(1000),
    })
  let bigSent = 0
  async function fillBig(count) {
    for (let done = 0; done < count; ) {
      const size = Math.min(1000, count - done)
      const events = Array.from({ length: size }, () => event(`big-${bigSent++}`, { at: 0 }))
      await queue.enqueueBulk(events, { destination: 'big' })
      done += size
      if (done % 100_000 === 0) log(`enqueued ${done} of big's backlog`)
    }
  }

  // The backlog first, before any worker runs: it is there when they start.
  const filled = epochMs()
  await fillBig(backlog)
  log(`backlog of ${backlog} enqueued in ${round((epochMs() - filled) / 1000)} s`)
  const fleet = await startFleet()
  const backlogPhase = await phase('backlog')
  const counts = await queue.counts()
  log(`left after the backlog phase: ${counts.waiting} waiting (${counts.parked ?? 'none'} parked)`)
  // What is left of big's backlog is dropped: the next phases start from an empty Redis.
  await stopFleet(fleet)
  await queue.close()
  queue = await freshQueue()
  const fleet2 = await startFleet()

  const alone = await phase('alone')
  const busyRate = Math.round(backlogPhase.bigPerSecond * busyShare)
  const busy = await phase('busy', (until) => steadily(busyRate, until, fillBig))
  await stopFleet(fleet2)
  await queue.close()
  receiver.process.kill()
  await server.stop()
  report(
    { workers, seconds, smallRate, backlog, busyShare, busyRate, entry: bullmqEntry },
    { alone, busy, backlog: backlogPhase },
  )
}

const role = process.argv[2] ? JSON.parse(process.argv[2]) : {}
if (role.role === 'receiver') receiverRole(role)
else if (role.role === 'worker') await workerRole(role)
else await main()
