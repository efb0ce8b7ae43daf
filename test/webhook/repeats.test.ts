// A worker killed with SIGKILL in the middle of a delivery: the worker that takes its job over
// says so, twice over. Its check finds the job without a live worker and puts it back
// ('recovered'), and its run of it is a repeat of one that did not finish ('repeated'): the
// receiver may get the event again. Both are counted in the metrics.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { WebhookQueue, WebhookWorker, type RecoveredJob, type RepeatedRun } from '../../src/webhook/bullmq/index.js'
import { instrumentWebhooks } from '../../src/webhook/otel/index.js'
import { metricsUnderTest } from '../helpers/metrics.js'
import { redisForFile } from '../helpers/redis-suite.js'
import { startSink, type Responder, type Sink } from '../helpers/sink.js'

const WORKER = fileURLToPath(new URL('../helpers/bullmq-worker.ts', import.meta.url))
const redis = redisForFile()
const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()))
})

/**
 * A worker process takes `messageId`'s job and sends it to a receiver answering with `respond`
 * (whose first answer must hold the request); it is killed with SIGKILL while that request is out.
 */
async function killedMidDelivery(name: string, messageId: string, respond: Responder): Promise<Sink> {
  const sink = await startSink(respond)
  open.push(sink)
  const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: redis.server.port }, name })
  open.push(queue)
  const doomed = spawn(process.execPath, ['--import', 'tsx', WORKER], {
    env: { ...process.env, REDIS_PORT: String(redis.server.port), WEBHOOK_URL: sink.url, QUEUE: name },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let said = ''
  doomed.stdout?.on('data', (chunk: Buffer) => (said += chunk.toString()))
  await expect.poll(() => said.includes('ready'), { timeout: 20_000 }).toBe(true)
  await queue.enqueue({ type: 'track', userId: 'u1', event: 'E', messageId })
  await expect.poll(() => sink.requests.length, { timeout: 10_000 }).toBe(1)
  const died = new Promise((resolve) => doomed.once('exit', resolve))
  doomed.kill('SIGKILL')
  await died
  return sink
}

describe.runIf(redis.available)('a job whose worker died', () => {
  it("is told as 'recovered' by the worker that finds it, and its next run as 'repeated', once each", {
    timeout: 60_000,
  }, async () => {
    const name = 'repeats'
    // The first request is held until its worker is dead; every later one is answered at once.
    const sink = await killedMidDelivery(name, 'held', (_, index) =>
      index === 0 ? { status: 200, delayMs: 30_000 } : { status: 200 },
    )

    const metrics = metricsUnderTest()
    const heir = new WebhookWorker(
      { webhooks: [{ url: sink.url }], sharedSecret: 's3cret' },
      {
        connection: { host: '127.0.0.1', port: redis.server.port, maxRetriesPerRequest: null },
        name,
        lockDuration: 2_000,
        stalledInterval: 1_000,
      },
    )
    open.push(heir, { close: () => metrics.shutdown() })
    const measuring = instrumentWebhooks(heir, { meterProvider: metrics.provider })
    const recovered: RecoveredJob[] = []
    const repeated: RepeatedRun[] = []
    const delivered: string[] = []
    heir.on('recovered', (notice) => recovered.push(notice))
    heir.on('repeated', (notice) => repeated.push(notice))
    heir.on('delivered', (result) => delivered.push(result.eventId))
    await expect.poll(() => delivered, { timeout: 30_000 }).toEqual(['held'])
    expect(recovered).toEqual([{ jobId: 'evt-held', eventId: 'held' }])
    expect(repeated).toEqual([{ jobId: 'evt-held', eventId: 'held', stalls: 1 }])
    // The receiver got the event twice: once from the dead worker, once from its heir.
    expect(sink.requests.map((request) => request.headers['webhook-id'])).toEqual(['held', 'held'])
    const collected = await metrics.collect()
    expect(collected.get('eventwire.webhook.jobs.recovered')?.points[0]?.value).toBe(1)
    expect(collected.get('eventwire.webhook.deliveries.repeated')?.points[0]?.value).toBe(1)
    measuring.stop()
  })

  it("tells a repeat once: a job that stalled once and then waits for a retry is not 'repeated' again", {
    timeout: 60_000,
  }, async () => {
    const name = 'repeats-once'
    let answers = 0
    // Held first (its worker dies), then 503 once (a retry is stored), then 200.
    const sink = await killedMidDelivery(name, 'twice', () => {
      answers++
      return answers === 1 ? { status: 200, delayMs: 30_000 } : answers === 2 ? { status: 503 } : { status: 200 }
    })
    const heir = new WebhookWorker(
      { webhooks: [{ url: sink.url }], sharedSecret: 's3cret', backoff: () => 100 },
      {
        connection: { host: '127.0.0.1', port: redis.server.port, maxRetriesPerRequest: null },
        name,
        lockDuration: 2_000,
        stalledInterval: 1_000,
      },
    )
    open.push(heir)
    const repeated: RepeatedRun[] = []
    const delivered: string[] = []
    heir.on('repeated', (notice) => repeated.push(notice))
    heir.on('delivered', (result) => delivered.push(result.eventId))
    await expect.poll(() => delivered, { timeout: 30_000 }).toEqual(['twice'])
    expect(sink.requests).toHaveLength(3)
    expect(repeated).toEqual([{ jobId: 'evt-twice', eventId: 'twice', stalls: 1 }])
  })
})
