import { freePort, startRedisServer } from './redis-server.mjs'
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
/** The append-only file on (everysec); replicas synced at once; a SIGTERM ends a node even mid-sync. */
const redisServer = (port, extra) =>
  startRedisServer({
    port,
    args: ['--appendonly', 'yes', '--appendfsync', 'everysec', '--repl-diskless-sync-delay', '0']
      .concat(['--shutdown-on-sigterm', 'force'])
      .concat(extra),
  })
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
