// The durable engine (WebhookQueue and WebhookWorker on BullMQ) against a bare BullMQ floor, on a
// redis-server of its own (AOF on, fsync every second) and a receiver process of its own. Prints
// progress on stderr and one JSON line on stdout.
//
//   node bench/durable-run.mjs '{"redisPort":17301}'            # everything, default sizes
//   node bench/durable-run.mjs '{"redisPort":17301,"parts":["deliveries"],"workers":[1],"profile":"/tmp/prof"}'
//
// Parts (`parts`, all by default):
// - deliveries: `events` events wait in a paused queue; `workers` processes of one kind start, then
//   the queue resumes and the clock runs until the receiver has seen every event's webhook-id.
//   Worker CPU is process.cpuUsage() of the worker processes, from just before the resume until
//   every job has left Redis. Redis commands are INFO commandstats over the same span (commands
//   that scripts run included), less this script's own polling; Redis CPU is INFO cpu over it. eventwire and the floor
//   alternate, `pairs` pairs per worker count.
// - enqueue: `enqueueEvents` events stored by a fresh producer process, `batch` at a time:
//   WebhookQueue.enqueue() (each awaited, a batch in parallel), WebhookQueue.enqueueBulk() when the
//   build has it, BullMQ's Queue.add (same batching) and Queue.addBulk (one call per batch).
// - memory: used_memory after `waitingEvents` events wait (no worker) less before, per event.
// - scale: the registry's destinations, as a platform runs them: `events` events spread over
//   `destinations` destinations of `urlsPerDestination` URLs each (mode 'each', every URL a path on
//   the receiver), against the same events to one destination of as many URLs, alternated `pairs`
//   times, with `scaleWorkers` workers that serve the registry. Its clock runs until every job has
//   left Redis; each worker reports its RSS when it stops, and its heap after a full collection.
//   A third run keeps the whole registry and sends every event to one destination of it: its
//   workers' heap against the one destination's.
//
// The floor does the same work by hand: the same body (toWebhookPayload, JSON.stringify), job data
// { eventId, body } with job id `evt-<id>` and removeOnComplete; a BullMQ Worker with the same
// concurrency posting with undici Pool.request (as many connections), the same four headers
// (content-type, user-agent, webhook-id, x-signature: HMAC-SHA1 hex of the body).
// `profile`: a directory; each worker process then runs with --cpu-prof into it.
import { spawn } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { join } from 'node:path'
import { freePort, startRedisServer } from './redis-server.mjs'

const config = JSON.parse(process.argv[2] ?? '{}')
const here = import.meta.dirname
/** Extra node flags for child processes (the smoke test runs the sources through tsx). */
const nodeArgs = process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : []
const bullmqEntry = process.env.EVENTWIRE_BULLMQ_ENTRY ?? 'eventwire/webhook/bullmq'
const webhookEntry = process.env.EVENTWIRE_WEBHOOK_ENTRY ?? 'eventwire/webhook'
const SECRET = 's3cret'
/** eventwire's default worker concurrency, given to both. */
const CONCURRENCY = 50
const PREFIX = 'bull'

const event = (run, index) => ({
  type: 'track',
  messageId: `${run}-${index}`,
  userId: `user-${index % 1000}`,
  event: 'Order Completed',
  properties: { index, total: 42.5, currency: 'EUR' },
})
const floorJobId = (eventId) => `evt-${eventId}`
const FLOOR_JOB_OPTIONS = { removeOnComplete: true }
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const epochMs = () => performance.timeOrigin + performance.now()
const cpuMsSince = (before) => {
  const cpu = process.cpuUsage(before)
  return (cpu.user + cpu.system) / 1000
}
const log = (line) => process.stderr.write(`${line}\n`)

/** A worker process: says 'ready', measures its CPU from 'start' to 'stop', then closes and exits. */
async function workerRole({ kind, redisPort, url }) {
  const connection = { host: '127.0.0.1', port: redisPort, maxRetriesPerRequest: null }
  const counts = { delivered: 0, failed: 0 }
  let close
  if (kind === 'fleet') {
    const { WebhookWorker } = await import(bullmqEntry)
    const worker = new WebhookWorker({}, { connection, concurrency: CONCURRENCY })
    worker.on('delivered', () => counts.delivered++)
    worker.on('failed', () => counts.failed++)
    await worker.ready()
    close = () => worker.close()
  } else if (kind === 'eventwire') {
    const { WebhookWorker } = await import(bullmqEntry)
    const worker = new WebhookWorker(
      { webhooks: [{ url }], sharedSecret: SECRET },
      { connection, concurrency: CONCURRENCY },
    )
    worker.on('delivered', () => counts.delivered++)
    worker.on('failed', () => counts.failed++)
    await worker.ready()
    close = () => worker.close()
  } else {
    const [{ Worker }, { DEFAULT_QUEUE_NAME }, { Pool }] = await Promise.all([
      import('bullmq'),
      import(bullmqEntry),
      import('undici'),
    ])
    const target = new URL(url)
    const pool = new Pool(target.origin, { connections: CONCURRENCY })
    const worker = new Worker(
      DEFAULT_QUEUE_NAME,
      async (job) => {
        const { eventId, body } = job.data
        const response = await pool.request({
          method: 'POST',
          path: target.pathname,
          headers: {
            'content-type': 'application/json',
            'user-agent': 'floor/1.0',
            'webhook-id': eventId,
            'x-signature': createHmac('sha1', SECRET).update(body).digest('hex'),
          },
          body,
        })
        await response.body.dump()
        if (response.statusCode < 200 || response.statusCode > 299) {
          counts.failed++
          throw new Error(`HTTP ${response.statusCode}`)
        }
        counts.delivered++
      },
      { connection, prefix: PREFIX, concurrency: CONCURRENCY },
    )
    await worker.waitUntilReady()
    close = async () => {
      await worker.close()
      await pool.close()
    }
  }
  let before
  process.on('message', async (message) => {
    if (message === 'start') {
      before = process.cpuUsage()
      process.send({ type: 'started' })
    } else if (message === 'stop') {
      const cpuMs = cpuMsSince(before)
      const rssMb = process.memoryUsage().rss / 2 ** 20
      // What the worker still holds once its work is done (a full collection first): its state, not its garbage.
      globalThis.gc?.()
      const heapMb = process.memoryUsage().heapUsed / 2 ** 20
      await close()
      process.send({ type: 'stopped', cpuMs, rssMb, heapMb, ...counts }, () => process.exit(0))
    }
  })
  process.send({ type: 'ready' })
}

/** A producer process: stores `events` events one way, `batch` at a time; prints its wall and CPU time. */
async function producerRole({ variant, redisPort, events, batch, run }) {
  const connection = { host: '127.0.0.1', port: redisPort }
  const { WebhookQueue, DEFAULT_QUEUE_NAME } = await import(bullmqEntry)
  const { toWebhookPayload } = await import(webhookEntry)
  const { Queue } = await import('bullmq')
  const input = Array.from({ length: events }, (_, index) => event(run, index))
  const batches = []
  for (let start = 0; start < events; start += batch) batches.push(input.slice(start, start + batch))
  const ours = new WebhookQueue({ connection })
  const floor = new Queue(DEFAULT_QUEUE_NAME, { connection, prefix: PREFIX })
  await ours.ready()
  await floor.waitUntilReady()
  const floorJob = (item) => {
    const body = JSON.stringify(toWebhookPayload(item))
    return {
      name: 'deliver',
      data: { eventId: item.messageId, body },
      opts: { jobId: floorJobId(item.messageId), ...FLOOR_JOB_OPTIONS },
    }
  }
  const store = {
    enqueue: (items) => Promise.all(items.map((item) => ours.enqueue(item))),
    enqueueBulk: (items) => ours.enqueueBulk(items),
    add: (items) =>
      Promise.all(
        items.map((item) => {
          const job = floorJob(item)
          return floor.add(job.name, job.data, job.opts)
        }),
      ),
    addBulk: (items) => floor.addBulk(items.map(floorJob)),
  }[variant]
  const started = performance.now()
  const before = process.cpuUsage()
  for (const items of batches) await store(items)
  const result = { variant, events, wallMs: performance.now() - started, cpuMs: cpuMsSince(before) }
  await Promise.all([ours.close(), floor.close()])
  console.log(JSON.stringify(result))
  process.exit(0)
}

async function startReceiver() {
  const child = spawn(process.execPath, [join(here, 'receiver.mjs'), '200', 'count'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const port = await new Promise((resolve) => child.stdout.once('data', (chunk) => resolve(Number(String(chunk)))))
  const url = `http://127.0.0.1:${port}`
  return {
    url: `${url}/in`,
    stats: async (method = 'GET') => (await fetch(`${url}/_stats`, { method })).json(),
    stop: () => child.kill(),
  }
}

/** Sends `command` to a child and waits for its answer of `type`. */
function ask(child, command, type) {
  const answer = message(child, type)
  child.send(command)
  return answer
}

/** The next IPC message of `type` from a child. */
function message(child, type) {
  return new Promise((resolve, reject) => {
    const onMessage = (received) => {
      if (received?.type !== type) return
      child.off('message', onMessage)
      child.off('exit', onExit)
      resolve(received)
    }
    const onExit = (code) => reject(new Error(`a ${type === 'ready' ? 'starting' : ''} worker exited with ${code}`))
    child.on('message', onMessage)
    child.once('exit', onExit)
  })
}

/** This script in another role; a worker's stdout goes to stderr, a producer's JSON line comes back on a pipe. */
function spawnChild(role, extraArgs = []) {
  return spawn(process.execPath, [...nodeArgs, ...extraArgs, join(here, 'durable-run.mjs'), JSON.stringify(role)], {
    stdio: ['ignore', role.role === 'producer' ? 'pipe' : 2, 'inherit', 'ipc'],
  })
}

/** Redis's CPU time so far (user and system, seconds), from INFO cpu: this script's polling included, the same for both kinds. */
const redisCpuSeconds = (info) =>
  Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1])

/** Calls per command in INFO commandstats. */
function commandCalls(info) {
  const calls = {}
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[match[1]] = Number(match[2])
  return calls
}

/** Commands that are not deliveries' or enqueues' work: set-up checks and this script's own. */
const NOT_COUNTED = new Set(['info', 'config', 'client', 'hello', 'select', 'ping'])

function commandSummary(calls, ownCalls = {}) {
  const byCommand = {}
  let total = 0
  for (const [command, count] of Object.entries(calls)) {
    if (NOT_COUNTED.has(command.split('|')[0])) continue
    const net = count - (ownCalls[command] ?? 0)
    if (net <= 0) continue
    byCommand[command] = net
    total += net
  }
  return { total, byCommand }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const spread = (values) => [Math.min(...values), Math.max(...values)]
const round = (value, digits = 0) => Number(value.toFixed(digits))

async function orchestrate() {
  const smoke = config.smoke ?? false
  const sizes = {
    events: config.events ?? (smoke ? 300 : 20_000),
    workers: config.workers ?? (smoke ? [1, 2] : [1, 2, 4]),
    pairs: config.pairs ?? (smoke ? 1 : 3),
    enqueueEvents: config.enqueueEvents ?? (smoke ? 300 : 20_000),
    batch: config.batch ?? 100,
    waitingEvents: config.waitingEvents ?? (smoke ? 300 : 10_000),
    destinations: config.destinations ?? (smoke ? 50 : 10_000),
    urlsPerDestination: config.urlsPerDestination ?? 5,
    scaleWorkers: config.scaleWorkers ?? (smoke ? 2 : 4),
  }
  const parts = new Set(config.parts ?? ['deliveries', 'enqueue', 'memory', 'scale'])
  const redisPort = config.redisPort ?? (await freePort())
  const { Redis } = await import('ioredis')
  const { Queue } = await import('bullmq')
  const { WebhookQueue, DEFAULT_QUEUE_NAME } = await import(bullmqEntry)
  const { toWebhookPayload } = await import(webhookEntry)
  const server = await startRedisServer({ port: redisPort, args: ['--appendonly', 'yes', '--appendfsync', 'everysec'] })
  const receiver = await startReceiver()
  const connection = { host: '127.0.0.1', port: redisPort }
  const redis = new Redis(connection)
  const control = new Queue(DEFAULT_QUEUE_NAME, { connection, prefix: PREFIX })
  const ours = new WebhookQueue({ connection })
  const key = (name) => `${PREFIX}:${DEFAULT_QUEUE_NAME}:${name}`
  let runNumber = 0

  /**
   * Stores `count` events the way `kind` does, outside any measurement; with `destinations`, the
   * registry's, the n-th event to destination `d<n mod destinations>`.
   */
  async function fill(kind, run, count, destinations, busy = destinations) {
    for (let start = 0; start < count; start += 1_000) {
      const items = Array.from({ length: Math.min(1_000, count - start) }, (_, i) => event(run, start + i))
      if (destinations !== undefined) {
        for (let at = 0; at < items.length; at += 100)
          await Promise.all(
            items
              .slice(at, at + 100)
              .map((item, i) => ours.enqueue(item, { destination: `d${(start + at + i) % busy}` })),
          )
      } else if (kind === 'eventwire') {
        for (let at = 0; at < items.length; at += 100)
          await Promise.all(items.slice(at, at + 100).map((item) => ours.enqueue(item)))
      } else {
        await control.addBulk(
          items.map((item) => ({
            name: 'deliver',
            data: { eventId: item.messageId, body: JSON.stringify(toWebhookPayload(item)) },
            opts: { jobId: floorJobId(item.messageId), ...FLOOR_JOB_OPTIONS },
          })),
        )
      }
    }
  }

  /** Sets `count` destinations `d0`, `d1`... of `urlsPerDestination` URLs each, paths on the receiver. */
  async function setDestinations(count) {
    const ids = Array.from({ length: count }, (_, index) => `d${index}`)
    for (let at = 0; at < ids.length; at += 100)
      await Promise.all(
        ids.slice(at, at + 100).map((id) =>
          ours.destinations.set({
            id,
            webhooks: Array.from({ length: sizes.urlsPerDestination }, (_, url) => ({
              url: `${receiver.url}/${id}/${url}`,
            })),
            sharedSecret: SECRET,
            mode: 'each',
          }),
        ),
      )
  }

  /** `destinations` in the registry (none: the worker's own webhooks), the events spread over the first `busy` of them. */
  async function deliveriesRun(kind, workers, destinations, busy = destinations) {
    const run = `d${++runNumber}`
    await redis.flushall()
    await control.pause()
    if (destinations !== undefined) await setDestinations(destinations)
    await fill(kind, run, sizes.events, destinations, busy)
    await receiver.stats('DELETE')
    const children = Array.from({ length: workers }, () =>
      spawnChild({ role: 'worker', kind, redisPort, url: receiver.url }, [
        '--expose-gc',
        ...(config.profile ? ['--cpu-prof', '--cpu-prof-dir', config.profile] : []),
      ]),
    )
    await Promise.all(children.map((child) => message(child, 'ready')))
    await redis.config('RESETSTAT')
    await Promise.all(children.map((child) => ask(child, 'start', 'started')))
    const redisCpuBefore = redisCpuSeconds(await redis.info('cpu'))
    const started = epochMs()
    await control.resume()
    let seen = await receiver.stats()
    let lastProgress = Date.now()
    for (let previous = -1; seen.unique < sizes.events; seen = await receiver.stats()) {
      if (seen.unique !== previous) [previous, lastProgress] = [seen.unique, Date.now()]
      if (Date.now() - lastProgress > 60_000)
        throw new Error(`${kind}: no delivery for 60 s at ${seen.unique}/${sizes.events}`)
      await sleep(25)
    }
    // Every job has left Redis (completions may trail the receiver's answers): nothing waits or is active.
    let polls = 0
    for (;;) {
      polls++
      const [[, waiting], [, active], [, delayed]] = await redis
        .pipeline()
        .llen(key('wait'))
        .llen(key('active'))
        .zcard(key('delayed'))
        .exec()
      if (waiting + active + delayed === 0) break
      await sleep(10)
    }
    const doneAt = epochMs()
    // Every URL of every event has answered once its job is gone: the receiver's count is whole now.
    if (destinations !== undefined) seen = await receiver.stats()
    const redisCpuMs = (redisCpuSeconds(await redis.info('cpu')) - redisCpuBefore) * 1000
    const commands = commandSummary(commandCalls(await redis.info('commandstats')), {
      llen: 2 * polls,
      zcard: polls,
    })
    // Where Redis spent its time, per command (time inside scripts counts for the script too): `BENCH_REDIS_STATS=1`.
    if (process.env.BENCH_REDIS_STATS)
      for (const line of (await redis.info('commandstats')).split('\n'))
        if (line.startsWith('cmdstat_')) log(`  ${kind} ${line.trim().replace(/,rejected_calls.*/, '')}`)
    const stopped = await Promise.all(children.map((child) => ask(child, 'stop', 'stopped')))
    await Promise.all(children.map((child) => child.exitCode === null && new Promise((r) => child.once('exit', r))))
    // An event of several URLs is seen at its first: the last requests are to URLs of ids seen before.
    const wallMs = (destinations === undefined ? seen.lastNewAt : doneAt) - started
    const cpuMs = stopped.reduce((sum, child) => sum + child.cpuMs, 0)
    const delivered = stopped.reduce((sum, child) => sum + child.delivered, 0)
    const result = {
      kind,
      workers,
      ...(destinations === undefined ? {} : { destinations, busy, urlsPerDestination: sizes.urlsPerDestination }),
      events: sizes.events,
      wallMs,
      perSecond: sizes.events / (wallMs / 1000),
      cpuMs,
      cpuMicrosPerDelivery: (cpuMs * 1000) / sizes.events,
      commandsPerDelivery: commands.total / sizes.events,
      redisCpuMicrosPerDelivery: (redisCpuMs * 1000) / sizes.events,
      commands: commands.byCommand,
      requests: seen.requests,
      duplicates: seen.requests - seen.unique,
      delivered,
      failed: stopped.reduce((sum, child) => sum + child.failed, 0),
      workerRssMb: stopped.map((child) => round(child.rssMb)),
      workerHeapMb: stopped.map((child) => round(child.heapMb, 1)),
    }
    log(
      `durable ${kind}, ${workers} worker(s): ${round(result.perSecond)} deliveries/s, ${round(result.cpuMicrosPerDelivery, 1)} µs worker CPU and ${round(result.commandsPerDelivery, 2)} Redis commands (${round(result.redisCpuMicrosPerDelivery, 1)} µs Redis CPU) per delivery, ${result.duplicates} duplicates`,
    )
    return result
  }

  async function enqueueRun(variant) {
    await redis.flushall()
    await redis.config('RESETSTAT')
    const child = spawnChild({
      role: 'producer',
      variant,
      redisPort,
      events: sizes.enqueueEvents,
      batch: sizes.batch,
      run: `e${++runNumber}`,
    })
    let output = ''
    child.stdout.on('data', (chunk) => {
      output += chunk
    })
    const code = await new Promise((resolve) => child.once('exit', resolve))
    if (code !== 0) throw new Error(`the ${variant} producer exited with ${code}`)
    const result = JSON.parse(output.trim().split('\n').pop())
    // eventwire parks what goes past one destination's window (fair queueing): waiting all the same.
    const stored = (await redis.llen(key('wait'))) + Number((await redis.get(key('parked-count'))) ?? 0)
    if (stored !== sizes.enqueueEvents) throw new Error(`${variant}: ${stored} of ${sizes.enqueueEvents} jobs stored`)
    const commands = commandSummary(commandCalls(await redis.info('commandstats')))
    Object.assign(result, {
      perSecond: sizes.enqueueEvents / (result.wallMs / 1000),
      cpuMicrosPerEvent: (result.cpuMs * 1000) / sizes.enqueueEvents,
      commandsPerEvent: commands.total / sizes.enqueueEvents,
      commands: commands.byCommand,
    })
    log(
      `enqueue ${variant}: ${round(result.perSecond)} events/s, ${round(result.cpuMicrosPerEvent, 1)} µs producer CPU and ${round(result.commandsPerEvent, 2)} Redis commands per event`,
    )
    return result
  }

  /**
   * Redis's used_memory less what is not the data's: client buffers and the append-only file's
   * buffer, read after that buffer was flushed (fsync every second).
   */
  async function dataMemory() {
    await sleep(1_100)
    const info = await redis.info('memory')
    const field = (name) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? 0)
    return field('used_memory') - field('mem_clients_normal') - field('mem_aof_buffer')
  }

  async function memoryRun(kind) {
    await redis.flushall()
    // The queue's own keys (meta) exist before the first event in both cases.
    await control.waitUntilReady()
    const before = await dataMemory()
    await fill(kind, `m${++runNumber}`, sizes.waitingEvents)
    const after = await dataMemory()
    const [sampleKey] = await redis.lrange(key('wait'), 0, 0)
    const result = {
      kind,
      waiting: (await redis.llen(key('wait'))) + Number((await redis.get(key('parked-count'))) ?? 0),
      bytesPerWaiting: (after - before) / sizes.waitingEvents,
      // SAMPLES 0: every field, not Redis's estimate from five (a job's hash is a hashtable).
      jobHashBytes: await redis.memory('USAGE', key(sampleKey), 'SAMPLES', '0'),
      eventsStreamBytes: (await redis.memory('USAGE', key('events'), 'SAMPLES', '0')) ?? 0,
    }
    log(
      `memory ${kind}: ${round(result.bytesPerWaiting)} bytes of Redis per waiting delivery (job hash ${result.jobHashBytes} B)`,
    )
    return result
  }

  const output = { sizes, deliveries: [], enqueue: [], memory: [], scale: [] }
  try {
    await ours.ready()
    if (parts.has('deliveries')) {
      for (const workers of sizes.workers) {
        for (let pair = 0; pair < sizes.pairs; pair++) {
          const eventwire = await deliveriesRun('eventwire', workers)
          const floor = await deliveriesRun('floor', workers)
          output.deliveries.push({ workers, pair, eventwire, floor })
        }
      }
    }
    if (parts.has('enqueue')) {
      const variants = ['enqueue', 'add', 'addBulk']
      if (typeof ours.enqueueBulk === 'function') variants.splice(1, 0, 'enqueueBulk')
      for (let pair = 0; pair < sizes.pairs; pair++) {
        const results = {}
        for (const variant of variants) results[variant] = await enqueueRun(variant)
        output.enqueue.push(results)
      }
    }
    if (parts.has('scale')) {
      for (let pair = 0; pair < sizes.pairs; pair++) {
        const one = await deliveriesRun('fleet', sizes.scaleWorkers, 1)
        const many = await deliveriesRun('fleet', sizes.scaleWorkers, sizes.destinations)
        // The whole registry, and work for one destination of it: what a worker holds should be what `one` holds.
        const quiet = await deliveriesRun('fleet', sizes.scaleWorkers, sizes.destinations, 1)
        const heap = (run) => median(run.workerHeapMb)
        output.scale.push({
          one,
          many,
          quiet,
          manyOverOne: round(many.perSecond / one.perSecond, 2),
          quietHeapOverOne: round(heap(quiet) / heap(one), 2),
        })
        const pair = output.scale.at(-1)
        log(
          `scale: ${sizes.destinations} destinations at ${pair.manyOverOne}x the rate of one; worker heap with the registry and one busy ${pair.quietHeapOverOne}x that with one destination`,
        )
      }
    }
    if (parts.has('memory')) {
      for (let pair = 0; pair < sizes.pairs; pair++)
        output.memory.push({ eventwire: await memoryRun('eventwire'), floor: await memoryRun('floor') })
    }
  } finally {
    await Promise.allSettled([ours.close(), control.close()])
    redis.disconnect()
    receiver.stop()
    await server.stop()
  }
  Object.assign(output, summarize(output))
  console.log(JSON.stringify(output))
}

/** Medians, spreads (min and max) and eventwire-to-floor ratios, each ratio taken within its pair; and the targets. */
function summarize({ deliveries, enqueue, memory, scale }) {
  const byWorkers = [...new Set(deliveries.map((pair) => pair.workers))].map((workers) => {
    const pairs = deliveries.filter((pair) => pair.workers === workers)
    const side = (kind) => {
      const values = (field) => pairs.map((pair) => pair[kind][field])
      return {
        perSecond: round(median(values('perSecond'))),
        perSecondSpread: spread(values('perSecond')).map((value) => round(value)),
        cpuMicrosPerDelivery: round(median(values('cpuMicrosPerDelivery')), 1),
        cpuSpread: spread(values('cpuMicrosPerDelivery')).map((value) => round(value, 1)),
        commandsPerDelivery: round(median(values('commandsPerDelivery')), 2),
        redisCpuMicrosPerDelivery: round(median(values('redisCpuMicrosPerDelivery')), 1),
        duplicates: Math.max(...values('duplicates')),
      }
    }
    const ratio = (field) => pairs.map((pair) => pair.eventwire[field] / pair.floor[field])
    return {
      workers,
      eventwire: side('eventwire'),
      floor: side('floor'),
      throughputRatio: round(median(ratio('perSecond')), 3),
      throughputRatios: ratio('perSecond').map((value) => round(value, 3)),
      cpuRatio: round(median(ratio('cpuMicrosPerDelivery')), 3),
      cpuRatios: ratio('cpuMicrosPerDelivery').map((value) => round(value, 3)),
      commandsRatio: round(median(ratio('commandsPerDelivery')), 3),
      redisCpuRatio: round(median(ratio('redisCpuMicrosPerDelivery')), 3),
    }
  })
  const enqueueSummary = {}
  for (const variant of Object.keys(enqueue[0] ?? {})) {
    const values = (field) => enqueue.map((pair) => pair[variant][field])
    enqueueSummary[variant] = {
      perSecond: round(median(values('perSecond'))),
      perSecondSpread: spread(values('perSecond')).map((value) => round(value)),
      cpuMicrosPerEvent: round(median(values('cpuMicrosPerEvent')), 1),
      cpuSpread: spread(values('cpuMicrosPerEvent')).map((value) => round(value, 1)),
      commandsPerEvent: round(median(values('commandsPerEvent')), 2),
    }
  }
  const memorySummary = memory.length
    ? Object.fromEntries(
        ['eventwire', 'floor'].map((kind) => [
          kind,
          {
            bytesPerWaiting: round(median(memory.map((pair) => pair[kind].bytesPerWaiting))),
            jobHashBytes: median(memory.map((pair) => pair[kind].jobHashBytes)),
          },
        ]),
      )
    : undefined
  const targets = []
  const target = (name, value, goal, op) =>
    targets.push({
      name,
      value: value === undefined ? undefined : round(value, 3),
      goal,
      holds: value === undefined ? undefined : op === '<=' ? value <= goal : value >= goal,
    })
  for (const row of byWorkers) {
    target(
      `durable, ${row.workers} worker(s): worker CPU per delivery within 1.1x of the floor`,
      row.cpuRatio,
      1.1,
      '<=',
    )
    target(`durable, ${row.workers} worker(s): throughput at least 90% of the floor`, row.throughputRatio, 0.9, '>=')
  }
  if (scale.length)
    target(
      `durable: ${scale[0].many.destinations} destinations of ${scale[0].many.urlsPerDestination} URLs at least 90% of the rate of one destination (median ratio)`,
      median(scale.map((pair) => pair.manyOverOne)),
      0.9,
      '>=',
    )
  if (scale.length)
    target(
      `durable: worker heap with ${scale[0].quiet.destinations} destinations in the registry and one busy, no more than 1.1x with one destination (median ratio)`,
      median(scale.map((pair) => pair.quietHeapOverOne)),
      1.1,
      '<=',
    )
  if (memorySummary)
    target(
      'durable: Redis bytes per waiting delivery no more than the floor (ratio)',
      memorySummary.eventwire.bytesPerWaiting / memorySummary.floor.bytesPerWaiting,
      1,
      '<=',
    )
  if (enqueue.length) {
    // A rate within 1.2x: addBulk's rate at most 1.2 times enqueueBulk's. A build without
    // enqueueBulk is measured with its equivalent, enqueue() awaited a batch at a time.
    const bulk = enqueue[0].enqueueBulk ? 'enqueueBulk' : 'enqueue'
    target(
      `durable: ${bulk === 'enqueue' ? 'enqueue() in batches (no enqueueBulk in this build)' : 'enqueueBulk'} within 1.2x of addBulk (addBulk rate / its rate)`,
      median(enqueue.map((pair) => pair.addBulk.perSecond / pair[bulk].perSecond)),
      1.2,
      '<=',
    )
  }
  return { summary: { deliveries: byWorkers, enqueue: enqueueSummary, memory: memorySummary }, targets }
}

if (config.role === 'worker') await workerRole(config)
else if (config.role === 'producer') await producerRole(config)
else {
  await orchestrate()
  process.exit(0)
}
