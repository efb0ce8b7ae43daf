// A busy receiver behind the durable engine: does the breaker hold it back? Two WebhookWorker
// processes drain `events` events waiting in Redis (AOF on) to a receiver that answers 2% of
// events 400 and 5% of them 503 twice before a 2xx, with the default backoff. The same run twice,
// on fresh queues: with the default breaker, then with `breaker: false`. Prints progress on stderr
// and one JSON line on stdout: each run's drain time, its longest stretch with nothing delivered,
// and how often a breaker opened.
//
//   npm run build && node bench/breaker-run.mjs '{"events":60000}'
import { spawn } from 'node:child_process'
import { createServer } from 'node:http'
import { startRedisServer } from './redis-server.mjs'

const config = JSON.parse(process.argv[2] ?? '{}')
const bullmqEntry = process.env.EVENTWIRE_BULLMQ_ENTRY ?? 'eventwire/webhook/bullmq'
const log = (line) => process.stderr.write(`${line}\n`)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** A worker process: delivers until SIGTERM, then prints how often its breakers opened. */
async function workerRole({ redisPort, url, name, breaker }) {
  const { WebhookWorker } = await import(bullmqEntry)
  const worker = new WebhookWorker(
    { webhooks: [{ url }], sharedSecret: 's3cret', ...(breaker === false ? { breaker: false } : {}) },
    { connection: { host: '127.0.0.1', port: redisPort, maxRetriesPerRequest: null }, name },
  )
  let opened = 0
  worker.on('url-state', ({ circuit }) => {
    if (circuit === 'open') opened++
  })
  worker.on('error', (error) => log(`worker: ${error.message}`))
  process.on(
    'SIGTERM',
    () =>
      void worker.close().then(() => {
        console.log(JSON.stringify({ opened }))
        process.exit(0)
      }),
  )
  await worker.ready()
  console.log('ready')
}

/**
 * The busy receiver: event n is answered 400 when n % 50 is 0 (2%), 503 to its first two requests
 * when n % 20 is 1 (5%), else 204. It notes when each event settled (a 2xx, or the 400) by the
 * second since `start`.
 */
function startReceiver() {
  const seen = new Map()
  const done = new Set()
  let settled = 0
  let start = 0
  let lastAt = 0
  const perSecond = []
  const server = createServer((request, response) => {
    request.resume()
    const id = String(request.headers['webhook-id'] ?? '')
    const index = Number(id.slice(id.lastIndexOf('-') + 1))
    const nth = seen.get(id) ?? 0
    seen.set(id, nth + 1)
    const status = index % 50 === 0 ? 400 : index % 20 === 1 && nth < 2 ? 503 : 204
    if (status !== 503 && !done.has(id)) {
      done.add(id)
      settled++
      lastAt = Date.now()
      const second = Math.floor((lastAt - start) / 1_000)
      perSecond[second] = (perSecond[second] ?? 0) + 1
    }
    response.writeHead(status).end()
  })
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}/in`,
        reset: () => {
          seen.clear()
          done.clear()
          settled = 0
          start = Date.now()
          perSecond.length = 0
        },
        stats: () => ({ settled, lastAt, start, perSecond: [...perSecond] }),
        close: () => new Promise((done) => server.close(done)),
      }),
    ),
  )
}

/** Starts one worker process and resolves once it takes jobs. */
async function startWorker(args) {
  const child = spawn(process.execPath, [import.meta.filename, JSON.stringify({ ...args, role: 'worker' })], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let output = ''
  child.stdout.on('data', (chunk) => {
    output += chunk
  })
  while (!output.includes('ready')) await sleep(20)
  return {
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
      return JSON.parse(output.trim().split('\n').pop()).opened
    },
  }
}

async function run(receiver, redisPort, events, breaker) {
  const { WebhookQueue } = await import(bullmqEntry)
  const name = `breaker-${breaker === false ? 'off' : 'on'}-${Date.now()}`
  const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: redisPort }, name })
  for (let start = 0; start < events; start += 1_000) {
    const chunk = Array.from({ length: Math.min(1_000, events - start) }, (_, offset) => ({
      type: 'track',
      messageId: `${name}-${start + offset}`,
      userId: 'u1',
      event: 'Order Completed',
    }))
    await queue.enqueueBulk(chunk)
  }
  receiver.reset()
  const workers = await Promise.all([0, 1].map(() => startWorker({ redisPort, url: receiver.url, name, breaker })))
  const deadline = Date.now() + (config.timeoutMs ?? 600_000)
  while (receiver.stats().settled < events && Date.now() < deadline) await sleep(100)
  const opened = (await Promise.all(workers.map((worker) => worker.stop()))).reduce((sum, count) => sum + count, 0)
  await queue.close()
  const { settled, lastAt, start, perSecond } = receiver.stats()
  // The longest stretch of whole seconds, before the last event settled, in which none did.
  let gap = 0
  let current = 0
  for (let second = 0; second <= Math.floor((lastAt - start) / 1_000); second++) {
    current = (perSecond[second] ?? 0) === 0 ? current + 1 : 0
    gap = Math.max(gap, current)
  }
  const result = {
    breaker: breaker === false ? 'off' : 'default',
    settled,
    // A run that did not settle every event within the timeout has no drain time.
    drainMs: settled < events ? null : lastAt - start,
    lastSettledMs: lastAt - start,
    longestGapS: gap,
    opened,
  }
  log(JSON.stringify(result))
  return result
}

if (config.role === 'worker') {
  await workerRole(config)
} else {
  const events = config.events ?? 60_000
  const redis = await startRedisServer({ args: ['--appendonly', 'yes', '--appendfsync', 'everysec'] })
  const receiver = await startReceiver()
  try {
    const on = await run(receiver, redis.port, events, undefined)
    const off = await run(receiver, redis.port, events, false)
    console.log(
      JSON.stringify({
        events,
        on,
        off,
        ratio: on.drainMs === null || off.drainMs === null ? null : Number((on.drainMs / off.drainMs).toFixed(2)),
      }),
    )
  } finally {
    await receiver.close()
    await redis.stop()
  }
}
