// Workers whose wall clocks are minutes off the real time, in processes of their own, beside
// correct ones, on a real Redis: what they write for each other (a URL's breaker, a delivered id's
// window, an event's retry window, a URL's rate) holds for the others as it would with one clock.
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { WebhookQueue } from '../../src/webhook/bullmq/index.js'
import { redisForFile } from '../helpers/redis-suite.js'
import { startSink, type Sink } from '../helpers/sink.js'

const WORKER = fileURLToPath(new URL('../helpers/skewed-worker.ts', import.meta.url))
const TEN_MINUTES = 600_000
const redis = redisForFile()
let queues = 0
const open: Array<{ close(): Promise<void> }> = []
const children: ChildProcess[] = []
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL')
  await Promise.all(open.splice(0).map((item) => item.close()))
})

/** What a worker process said, line by line. */
interface WorkerProcess {
  readonly lines: Array<Record<string, unknown>>
  said(event: string): Array<Record<string, unknown>>
  stop(): Promise<void>
}

async function startWorker(queue: string, skewMs: number, settings: Record<string, unknown>): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
    env: {
      ...process.env,
      REDIS_PORT: String(redis.server.port),
      QUEUE: queue,
      SKEW_MS: String(skewMs),
      SETTINGS: JSON.stringify(settings),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  children.push(child)
  const lines: Array<Record<string, unknown>> = []
  let rest = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    const text = rest + chunk.toString()
    const parts = text.split('\n')
    rest = parts.pop() ?? ''
    for (const part of parts) if (part.trim() !== '') lines.push(JSON.parse(part) as Record<string, unknown>)
  })
  const said = (event: string) => lines.filter((line) => line['event'] === event)
  await expect.poll(() => said('ready').length, { timeout: 20_000 }).toBe(1)
  return {
    lines,
    said,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}

/** A receiver whose answer can be switched: `status.current` answers every request. */
async function switchable(status: number): Promise<{ sink: Sink; status: { current: number } }> {
  const answer = { current: status }
  const sink = await startSink(() => ({ status: answer.current }))
  open.push(sink)
  return { sink, status: answer }
}

function producerOf(queue: string, options: { dedupWindowMs?: number } = {}): WebhookQueue {
  const producer = new WebhookQueue({
    connection: { host: '127.0.0.1', port: redis.server.port },
    name: queue,
    ...options,
  })
  open.push(producer)
  return producer
}

const event = (id: string) => ({ type: 'track' as const, userId: 'u1', event: 'E', messageId: id })

describe.runIf(redis.available)('workers whose clocks are minutes off', () => {
  it.each([
    ['10 minutes fast opens the breaker; a correct worker', TEN_MINUTES, 0],
    ['correct opens the breaker; a worker 10 minutes slow', 0, -TEN_MINUTES],
  ])(
    'a worker %s delivers new events once the receiver is back, within the cool-down',
    {
      timeout: 60_000,
    },
    async (_, openerSkew, laterSkew) => {
      const queue = `skew-breaker-${++queues}`
      const { sink, status } = await switchable(503)
      const settings = {
        webhooks: [{ url: sink.url }],
        breaker: { failures: 2, coolDownMs: 1_000 },
        backoffMs: 600_000,
      }
      const producer = producerOf(queue)
      const opener = await startWorker(queue, openerSkew, settings)
      for (const id of ['f1', 'f2']) await producer.enqueue(event(id))
      await expect
        .poll(() => opener.said('url-state').map((line) => line['circuit']), { timeout: 10_000 })
        .toContain('open')
      await opener.stop()
      status.current = 200
      const later = await startWorker(queue, laterSkew, settings)
      const started = Date.now()
      for (let index = 0; index < 10; index++) await producer.enqueue(event(`n${index}`))
      // Held for what is left of the 1 s cool-down (spread by up to as much again), then a probe.
      await expect.poll(() => later.said('delivered').length, { timeout: 8_000 }).toBe(10)
      expect(Date.now() - started).toBeLessThan(6_000)
    },
  )

  it("remembers a delivered id for dedupWindowMs whatever the worker's clock says: a repeat is a duplicate", {
    timeout: 60_000,
  }, async () => {
    const queue = `skew-dedup-${++queues}`
    const { sink } = await switchable(200)
    const producer = producerOf(queue, { dedupWindowMs: 60_000 })
    const fast = await startWorker(queue, 90_000, { webhooks: [{ url: sink.url }] })
    const ids = Array.from({ length: 10 }, (_, index) => `d${index}`)
    for (const id of ids) await producer.enqueue(event(id))
    await expect.poll(() => fast.said('delivered').length, { timeout: 10_000 }).toBe(10)
    // The jobs are removed on completion; their ids stay remembered.
    await expect
      .poll(() => producer.counts().then((counts) => counts.active + counts.waiting), { timeout: 10_000 })
      .toBe(0)
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    const again = await producer.enqueueBulk(ids.map(event))
    expect(again.map((result) => result.status)).toEqual(ids.map(() => 'duplicate'))
    expect(sink.requests).toHaveLength(10)
  })

  it.each([
    ['10 minutes slow', -TEN_MINUTES],
    ['10 minutes fast', TEN_MINUTES],
  ])(
    "keeps an event's retry window as a worker %s stamped it, beside a correct worker",
    {
      timeout: 60_000,
    },
    async (_, skewMs) => {
      const queue = `skew-window-${++queues}`
      const { sink } = await switchable(503)
      const settings = { webhooks: [{ url: sink.url }], breaker: false, backoffMs: 1_500, retryWindowMs: 6_000 }
      const producer = producerOf(queue)
      const stamper = await startWorker(queue, skewMs, settings)
      const enqueued = Date.now()
      await producer.enqueue(event('w1'))
      await expect.poll(() => stamper.said('attempt').length, { timeout: 10_000 }).toBe(1)
      // What the stamper stored: the window's end on Redis's clock, not on its own.
      await expect
        .poll(async () => (await redis.raw.hget(`bull:${queue}:evt-w1`, 'data'))?.includes('"state"'))
        .toBe(true)
      const stored = JSON.parse((await redis.raw.hget(`bull:${queue}:evt-w1`, 'data')) ?? '{}') as {
        state: { deadline: number }
      }
      expect(Math.abs(stored.state.deadline - (enqueued + 6_000))).toBeLessThan(2_000)
      const correct = await startWorker(queue, 0, settings)
      const workers = [stamper, correct]
      const said = (what: string) => workers.reduce((count, worker) => count + worker.said(what).length, 0)
      // Still failing: retried until the window ends, then failed on time, not 10 minutes off.
      await expect.poll(() => said('failed'), { timeout: 15_000 }).toBe(1)
      const ended = Date.now() - enqueued
      expect(ended).toBeGreaterThan(5_000)
      expect(ended).toBeLessThan(12_000)
      // The first attempt and retries within the window, never a burst of early ones. (How many
      // retries come is BullMQ's: when a retry is scheduled it wakes one waiting worker, and a
      // skewed one may take that wake-up and go back to sleep; the other looks again within 5 s.)
      expect(said('attempt')).toBeGreaterThanOrEqual(2)
      expect(said('attempt')).toBeLessThanOrEqual(6)
    },
  )

  it('shares one rate between a worker 10 minutes fast and one 10 minutes slow', { timeout: 60_000 }, async () => {
    const queue = `skew-rate-${++queues}`
    const { sink } = await switchable(200)
    const settings = { webhooks: [{ url: sink.url }], ratePerUrl: 10 }
    const producer = producerOf(queue)
    const workers = [await startWorker(queue, TEN_MINUTES, settings), await startWorker(queue, -TEN_MINUTES, settings)]
    await producer.enqueueBulk(Array.from({ length: 30 }, (_, index) => event(`r${index}`)))
    await expect.poll(() => sink.requests.length, { timeout: 20_000 }).toBe(30)
    // A burst of one second's worth (10), then 10 a second between them: 20 more take 2 s.
    const times = sink.requests.map((request) => request.at)
    expect((times.at(-1) as number) - (times[0] as number)).toBeGreaterThan(1_500)
    expect(workers.every((worker) => worker.said('delivered').length > 0)).toBe(true)
  })
})
