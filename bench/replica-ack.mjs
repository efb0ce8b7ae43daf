// What waitForReplicas costs: WebhookQueue.enqueue() rate on a Redis primary with one replica, on
// 127.0.0.1, without and with `waitForReplicas: { count: 1 }`, alternated, one and 50 enqueues in
// flight. Also how many WAITs Redis ran per enqueue (the group commit). Needs redis-server and a
// build (npm run build).
//
//   node bench/replica-ack.mjs [--events 5000] [--pairs 3] [--port 0]
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'

const args = process.argv.slice(2)
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`)
  return at === -1 ? fallback : Number(args[at + 1])
}
const EVENTS = option('events', 5_000)
const PAIRS = option('pairs', 3)
/** First of two consecutive ports to use; 0: any free ones. */
const PORT = option('port', 0)

const { WebhookQueue } = await import(process.env.EVENTWIRE_BULLMQ_ENTRY ?? 'eventwire/webhook/bullmq')

async function freePort() {
  const server = createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** A redis-server with the append-only file on (everysec), resolved once it accepts connections. */
async function redisServer(port, extra = []) {
  const dir = mkdtempSync(join(tmpdir(), 'eventwire-bench-redis-'))
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes']
      .concat(['--appendfsync', 'everysec', '--repl-diskless-sync-delay', '0', '--shutdown-on-sigterm', 'force'])
      .concat(extra),
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  await new Promise((resolve, reject) => {
    let output = ''
    child.stdout.on('data', (chunk) => {
      output += chunk
      if (output.includes('Ready to accept connections')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)))
  })
  return {
    stop: async () => {
      await new Promise((resolve) => {
        child.once('exit', resolve)
        child.kill('SIGTERM')
      })
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

async function waits(redis) {
  const stats = await redis.info('commandstats')
  return Number(/^cmdstat_wait:calls=(\d+)/m.exec(stats)?.[1] ?? 0)
}

let queues = 0
/** Enqueues EVENTS events, `inFlight` at a time; events/s and WAITs per enqueue. */
async function measure(port, admin, inFlight, replicated) {
  const queue = new WebhookQueue({
    connection: { host: '127.0.0.1', port },
    name: `bench-${++queues}`,
    ...(replicated ? { waitForReplicas: { count: 1 } } : {}),
  })
  await queue.ready()
  const waitsBefore = await waits(admin)
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < EVENTS) {
        const index = next++
        await queue.enqueue({ type: 'track', userId: `u${index}`, event: 'Paid', messageId: `m-${queues}-${index}` })
      }
    }),
  )
  const seconds = (performance.now() - started) / 1000
  const waitsPerEnqueue = ((await waits(admin)) - waitsBefore) / EVENTS
  await queue.close()
  await admin.flushall()
  return { rate: EVENTS / seconds, waitsPerEnqueue }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

const primaryPort = PORT || (await freePort())
const replicaPort = PORT ? PORT + 1 : await freePort()
const primary = await redisServer(primaryPort, ['--shutdown-timeout', '0'])
const replica = await redisServer(replicaPort, ['--replicaof', '127.0.0.1', String(primaryPort)])
const admin = new Redis({ host: '127.0.0.1', port: primaryPort })
const replicaAdmin = new Redis({ host: '127.0.0.1', port: replicaPort })
try {
  while (!/master_link_status:up/.test(await replicaAdmin.info('replication')))
    await new Promise((resolve) => setTimeout(resolve, 50))
  const rows = []
  for (const inFlight of [1, 50]) {
    const plain = []
    const replicated = []
    for (let pair = 0; pair < PAIRS; pair++) {
      // Alternated, each pair in the other order: neither side always runs on a warmer machine.
      const order = pair % 2 === 0 ? [false, true] : [true, false]
      for (const withWait of order)
        (withWait ? replicated : plain).push(await measure(primaryPort, admin, inFlight, withWait))
    }
    const rates = (runs) => runs.map((run) => Math.round(run.rate))
    rows.push({
      inFlight,
      plain: { median: median(rates(plain)), runs: rates(plain) },
      waitForReplicas: {
        median: median(rates(replicated)),
        runs: rates(replicated),
        waitsPerEnqueue: median(replicated.map((run) => run.waitsPerEnqueue)),
      },
      ratio: Math.round((median(rates(replicated)) / median(rates(plain))) * 100) / 100,
    })
  }
  console.log(JSON.stringify({ events: EVENTS, pairs: PAIRS, rows }, null, 2))
} finally {
  admin.disconnect()
  replicaAdmin.disconnect()
  await replica.stop()
  await primary.stop()
}
