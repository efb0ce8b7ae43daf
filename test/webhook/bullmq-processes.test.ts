import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebhookQueue } from '../../src/webhook/bullmq/index.js'
import { startRedis, type RedisServer } from '../helpers/redis.js'
import { isInstalled, REDIS } from '../helpers/services.js'
import { startSink, type Sink } from '../helpers/sink.js'

const WORKER = fileURLToPath(new URL('../helpers/bullmq-worker.ts', import.meta.url))

let redis: RedisServer
// Without redis-server these suites are skipped, and the global setup says so (or fails under CI).
const withRedis = isInstalled(REDIS.executable)
beforeAll(async () => {
  // The append-only file on, as durability: 'strict' (the default) requires.
  if (withRedis) redis = await startRedis({ persistent: true, appendfsync: 'everysec' })
})
afterAll(async () => {
  if (withRedis) await redis.dispose()
})

/** Starts a worker process and resolves once it takes jobs. */
async function startWorker(name: string, url: string): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
    env: { ...process.env, REDIS_PORT: String(redis.port), WEBHOOK_URL: url, QUEUE: name },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()))
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`worker exited early with ${code}`)))
    const check = setInterval(() => {
      if (output.includes('ready')) {
        clearInterval(check)
        resolve()
      }
    }, 20)
  })
  return { child, output: () => output }
}

/** Sends SIGTERM and resolves with the number of events the worker says it delivered. */
async function stopWorker(worker: { child: ChildProcess; output: () => string }): Promise<number> {
  await new Promise<void>((resolve) => {
    worker.child.removeAllListeners('exit')
    worker.child.once('exit', () => resolve())
    worker.child.kill('SIGTERM')
  })
  const last = worker.output().trim().split('\n').pop() ?? '{}'
  return (JSON.parse(last) as { delivered: number }).delivered
}

/** A receiver that answers 500 to the first attempt of every fifth event, and counts what it accepted. */
async function countingReceiver(): Promise<{ sink: Sink; accepted: Map<string, number> }> {
  const accepted = new Map<string, number>()
  const seen = new Set<string>()
  const sink = await startSink((request) => {
    const id = String(request.headers['webhook-id'])
    const first = !seen.has(id)
    seen.add(id)
    if (first && Number(id.slice(1)) % 5 === 0) return { status: 500 }
    accepted.set(id, (accepted.get(id) ?? 0) + 1)
    return { status: 200, delayMs: 2 }
  })
  return { sink, accepted }
}

async function enqueue(name: string, count: number): Promise<void> {
  const producer = new WebhookQueue({ connection: { host: '127.0.0.1', port: redis.port }, name })
  for (let index = 0; index < count; index++)
    await producer.enqueue({ type: 'track', userId: `u${index}`, event: 'E', messageId: `e${index}` })
  await producer.close()
}

describe.runIf(withRedis)('worker processes', () => {
  it('recovers from a worker killed with SIGKILL mid-run: every event delivered at least once', {
    timeout: 120_000,
  }, async () => {
    const { sink, accepted } = await countingReceiver()
    const events = 3_000
    await enqueue('crash', events)
    const first = await startWorker('crash', sink.url)
    await expect.poll(() => accepted.size, { timeout: 60_000, interval: 10 }).toBeGreaterThanOrEqual(1_000)
    first.child.removeAllListeners('exit')
    first.child.kill('SIGKILL')
    const killedAt = accepted.size
    const second = await startWorker('crash', sink.url)
    await expect.poll(() => accepted.size, { timeout: 60_000 }).toBe(events)
    await stopWorker(second)
    await sink.close()
    const deliveries = [...accepted.values()].reduce((sum, count) => sum + count, 0)
    const duplicates = deliveries - events
    console.log(
      `crash recovery: killed after ${killedAt} of ${events} events; ${events} delivered, 0 missing, ${duplicates} duplicate deliveries`,
    )
    expect(accepted.size).toBe(events)
    for (let index = 0; index < events; index++) expect(accepted.has(`e${index}`)).toBe(true)
  })

  it('shares one queue between two worker processes', { timeout: 120_000 }, async () => {
    const { sink, accepted } = await countingReceiver()
    const events = 2_000
    const workers = await Promise.all([startWorker('shared', sink.url), startWorker('shared', sink.url)])
    await enqueue('shared', events)
    await expect.poll(() => accepted.size, { timeout: 60_000 }).toBe(events)
    const counts = await Promise.all(workers.map(stopWorker))
    await sink.close()
    console.log(`sharing: worker A delivered ${counts[0]}, worker B ${counts[1]}`)
    expect(counts[0]).toBeGreaterThan(0)
    expect(counts[1]).toBeGreaterThan(0)
    expect((counts[0] ?? 0) + (counts[1] ?? 0)).toBe(events)
  })
})
