// `eventwire serve` on one Redis (AOF on, fsync every second), two measures:
// - ingest: how many events a second one ingest process stores, against a floor, a bare
//   `node:http` server that parses each batch and stores its messages with BullMQ's
//   `Queue.addBulk` (each message a job, its messageId the job id). A load process posts the same
//   batches to each, `connections` at once, in alternated pairs, each on an empty Redis; after
//   each run the events in Redis are counted, so nothing lost is counted as stored.
// - latency: one ingest process and two worker processes (`--role`), a receiver that notes how
//   long each event took from the moment its request was sent; `rates` events a second each for
//   `seconds`, in requests of one hundredth of the rate, sent every 10 ms.
// Prints progress on stderr and one JSON line on stdout.
//
//   npm run build && node bench/serve-run.mjs '{"events":100000,"pairs":2,"rates":[200,2000],"seconds":20}'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { epochMs, log, percentile, round, sleep } from './fairness-phase.mjs'
import { startRedisServer } from './redis-server.mjs'

const config = JSON.parse(process.argv[2] ?? '{}')
const here = import.meta.dirname
const CLI = join(here, '../dist/cli.js')
const bullmqEntry = process.env.EVENTWIRE_BULLMQ_ENTRY ?? 'eventwire/webhook/bullmq'
const WRITE_KEY = 'wk_bench_7d1e'
const NAME = 'serve-bench'
/** Node flags for the serve processes and the floor's, to profile them: `SERVE_NODE_ARGS=--cpu-prof`. */
const serveNodeArgs = process.env.SERVE_NODE_ARGS ? process.env.SERVE_NODE_ARGS.split(' ') : []

/** A batch body of `count` events, each with its own messageId and the time it was sent. */
function batchBody(first, count, at = 0) {
  const batch = []
  for (let index = 0; index < count; index++)
    batch.push({
      type: 'track',
      userId: `u${(first + index) % 1000}`,
      event: 'Order Completed',
      messageId: `m-${first + index}`,
      timestamp: '2026-11-29T00:00:00.000Z',
      properties: { at, total: 42.5, currency: 'EUR', sku: 'sku-12345', items: 3 },
    })
  return JSON.stringify({ batch })
}

/** The floor: parse the batch, `Queue.addBulk` its messages, answer 200 once BullMQ has them. */
async function floorRole({ redisPort }) {
  const { Queue } = await import('bullmq')
  const queue = new Queue(NAME, { connection: { host: '127.0.0.1', port: redisPort } })
  await queue.waitUntilReady()
  const server = createServer((request, response) => {
    const chunks = []
    request.on('data', (chunk) => chunks.push(chunk))
    request.on('end', async () => {
      try {
        const { batch } = JSON.parse(Buffer.concat(chunks).toString('utf8'))
        await queue.addBulk(
          batch.map((message) => ({ name: 'event', data: message, opts: { jobId: message.messageId } })),
        )
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}')
      } catch (error) {
        response.writeHead(500).end(String(error))
      }
    })
  })
  server.keepAliveTimeout = 60_000
  // An exit, not a kill: a profile (`--cpu-prof`) is written.
  process.on('SIGTERM', () => process.exit(0))
  server.listen(0, '127.0.0.1', () => process.send({ type: 'ready', url: `http://127.0.0.1:${server.address().port}` }))
}

/** The load: `events` events in batches of `batch`, `connections` requests at once; reports the wall time. */
async function loadRole({ url, events, batch, connections }) {
  const { Agent, request } = await import('node:http')
  const agent = new Agent({ keepAlive: true, maxSockets: connections })
  const auth = `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}`
  const bodies = []
  for (let first = 0; first < events; first += batch) bodies.push(batchBody(first, Math.min(batch, events - first)))
  const post = (body) =>
    new Promise((resolve, reject) => {
      const sent = request(
        `${url}/v1/batch`,
        { method: 'POST', agent, headers: { 'content-type': 'application/json', authorization: auth } },
        (response) => {
          response.resume()
          response.on('end', () => resolve(response.statusCode))
        },
      )
      sent.on('error', reject)
      sent.end(body)
    })
  let next = 0
  let refused = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++]
        if ((await post(body)) !== 200) refused++
      }
    }),
  )
  const wallMs = performance.now() - started
  agent.destroy()
  process.send({ type: 'done', wallMs, refused }, () => process.exit(0))
}

/** A role of `script` in a process of its own, with a way to wait for its messages. */
function child(role, script = 'serve-run.mjs') {
  const flags = role.role === 'floor' ? serveNodeArgs : []
  const spawned = spawn(process.execPath, [...flags, join(here, script), JSON.stringify(role)], {
    stdio: ['ignore', 2, 'inherit', 'ipc'],
  })
  const message = (type) =>
    new Promise((resolve, reject) => {
      spawned.on('message', (received) => received?.type === type && resolve(received))
      spawned.once('exit', (code) => reject(new Error(`${role.role} exited with ${code}`)))
    })
  return { process: spawned, message }
}

/** CPU seconds a process has used, from /proc (Linux). */
async function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** `eventwire serve` with `args`, resolved once it logs that it listens or works. */
function serve(args, env) {
  const spawned = spawn(process.execPath, [...serveNodeArgs, CLI, 'serve', '--name', NAME, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let output = ''
  const started = new Promise((resolve, reject) => {
    spawned.stdout.on('data', (chunk) => {
      output += chunk
      for (const line of output.split('\n')) {
        if (!line.startsWith('{')) continue
        const record = JSON.parse(line)
        if (record.event === 'listening' || record.event === 'working') resolve(record)
      }
    })
    spawned.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${output}`)))
  })
  return { process: spawned, started }
}

async function stop(spawned) {
  if (spawned.exitCode !== null) return
  const exited = new Promise((resolve) => spawned.once('exit', resolve))
  spawned.kill('SIGTERM')
  await exited
}

async function main() {
  const events = config.events ?? 100_000
  const batch = config.batch ?? 20
  const connections = config.connections ?? 16
  const pairs = config.pairs ?? 2
  const rates = config.rates ?? [200, 2_000]
  const seconds = config.seconds ?? 20
  const redis = await startRedisServer({ args: ['--appendonly', 'yes', '--appendfsync', 'everysec'] })
  const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null }
  log(`redis-server on port ${redis.port}`)
  const { Redis } = await import('ioredis')
  const { Queue } = await import('bullmq')
  const { WebhookQueue } = await import(bullmqEntry)
  const admin = new Redis(connection)

  // The fairness bench's receiver: it notes each event's latency from its `properties.at`.
  const receiver = child({ role: 'receiver' }, 'fairness-run.mjs')
  const { port } = await receiver.message('ready')
  const receiverUrl = `http://127.0.0.1:${port}`
  const stats = async (method = 'GET') => (await fetch(`${receiverUrl}/_stats`, { method })).json()
  const file = join(mkdtempSync(join(tmpdir(), 'eventwire-serve-bench-')), 'platform.json')
  writeFileSync(
    file,
    JSON.stringify({
      sources: [{ id: 'bench', writeKey: WRITE_KEY, destinations: ['receiver'], rateLimit: 0 }],
      destinations: [{ id: 'receiver', webhooks: [{ url: `${receiverUrl}/in` }], sharedSecret: 'bench-s3cret' }],
    }),
  )
  const env = { EVENTWIRE_REDIS: `redis://127.0.0.1:${redis.port}`, EVENTWIRE_CONFIG: file }

  /** One ingest run against `kind`: its rate, its CPU per 1k events, and the events Redis holds after. */
  async function ingestRun(kind) {
    await admin.flushall()
    let server
    let url
    if (kind === 'floor') {
      server = child({ role: 'floor', redisPort: redis.port })
      url = (await server.message('ready')).url
    } else {
      server = serve(['--role', 'ingest', '--port', '0'], env)
      url = (await server.started).url
    }
    const cpuBefore = await cpuSeconds(server.process.pid)
    const redisBefore = await cpuSeconds(redis.pid)
    await admin.config('RESETSTAT')
    const load = child({ role: 'load', url, events, batch, connections })
    const { wallMs, refused } = await load.message('done')
    const cpu = (await cpuSeconds(server.process.pid)) - cpuBefore
    const redisCpu = (await cpuSeconds(redis.pid)) - redisBefore
    let stored
    if (kind === 'floor') {
      const queue = new Queue(NAME, { connection })
      stored = (await queue.getJobCounts('waiting')).waiting
      await queue.close()
    } else {
      const queue = new WebhookQueue({ connection, name: NAME })
      stored = (await queue.counts()).waiting
      await queue.close()
    }
    await stop(server.process)
    const result = {
      kind,
      eventsPerSecond: Math.round(events / (wallMs / 1000)),
      cpuMsPer1k: round((cpu * 1000) / (events / 1000), 2),
      redisCpuMsPer1k: round((redisCpu * 1000) / (events / 1000), 2),
      stored,
      refused,
    }
    // Where Redis spent its time, per command: `BENCH_REDIS_STATS=1`.
    if (process.env.BENCH_REDIS_STATS)
      for (const line of (await admin.info('commandstats')).split('\n'))
        if (line.startsWith('cmdstat_')) log(`  ${kind} ${line.trim()}`)
    log(
      `ingest ${kind}: ${result.eventsPerSecond} events/s, ${result.cpuMsPer1k} ms CPU per 1k, Redis ${result.redisCpuMsPer1k} ms per 1k, ${stored} stored`,
    )
    return result
  }

  const ingest = []
  const kinds = config.kinds ?? ['floor', 'serve']
  for (let pair = 0; pair < pairs; pair++) {
    const order = pair % 2 === 0 ? kinds : [...kinds].reverse()
    for (const kind of order) ingest.push(await ingestRun(kind))
  }
  const median = (kind, field) => {
    const values = ingest.filter((run) => run.kind === kind).map((run) => run[field])
    return values.sort((a, b) => a - b)[Math.floor(values.length / 2)]
  }
  const ingestRatio = round(median('serve', 'eventsPerSecond') / median('floor', 'eventsPerSecond'), 2)

  // Latency: one ingest and two workers, on an empty Redis.
  await admin.flushall()
  const ingestProcess = serve(['--role', 'ingest', '--port', '0'], env)
  const { url } = await ingestProcess.started
  const workers = [serve(['--role', 'worker'], env), serve(['--role', 'worker'], env)]
  await Promise.all(workers.map((worker) => worker.started))
  const { Agent } = await import('undici')
  const agent = new Agent({ connections: 8 })
  const auth = `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}`
  let sent = 0
  const latency = []
  for (const rate of rates) {
    await stats('DELETE')
    const perRequest = Math.max(1, Math.round(rate / 100))
    const until = epochMs() + seconds * 1000
    const requests = []
    let phaseEvents = 0
    for (let next = epochMs(); next < until; next += 10) {
      await sleep(Math.max(0, next - epochMs()))
      const body = batchBody(sent, perRequest, epochMs())
      sent += perRequest
      phaseEvents += perRequest
      requests.push(
        fetch(`${url}/v1/batch`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: auth },
          body,
          dispatcher: agent,
        }).then((response) => response.arrayBuffer()),
      )
    }
    await Promise.all(requests)
    // Every event of the phase at the receiver, or 30 s more.
    const settleUntil = epochMs() + 30_000
    while ((await stats()).latencies.length < phaseEvents && epochMs() < settleUntil) await sleep(100)
    const { latencies } = await stats()
    const sorted = latencies.sort((a, b) => a - b)
    const result = {
      rate,
      events: phaseEvents,
      received: sorted.length,
      p50: round(percentile(sorted, 0.5)),
      p95: round(percentile(sorted, 0.95)),
      p99: round(percentile(sorted, 0.99)),
      max: round(sorted.at(-1) ?? Number.NaN),
    }
    log(
      `latency at ${rate}/s: p50 ${result.p50} ms, p95 ${result.p95} ms, p99 ${result.p99} ms (${sorted.length} of ${phaseEvents})`,
    )
    latency.push(result)
  }
  await agent.close()
  await Promise.all([ingestProcess, ...workers].map((started) => stop(started.process)))
  receiver.process.kill()
  admin.disconnect()
  await redis.stop()
  console.log(
    JSON.stringify({ config: { events, batch, connections, pairs, rates, seconds }, ingest, ingestRatio, latency }),
  )
}

const role = process.argv[2] ? JSON.parse(process.argv[2]) : {}
if (role.role === 'floor') await floorRole(role)
else if (role.role === 'load') await loadRole(role)
else await main()
