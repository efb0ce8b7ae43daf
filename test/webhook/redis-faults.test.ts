// Redis refusing a step of a job, filling up, or going away under a worker: a job is never failed
// for Redis's fault (delivered or not), a full Redis stops the worker with one error instead of
// one per attempt, and close() ends by its deadline. The refusals of one step are made by wrapping
// that step of BullMQ's job once (a failover's CLUSTERDOWN cannot be timed to one command); the
// full Redis and the Redis that goes away are real.
import { ReplyError } from 'ioredis'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { RedisFaultError, WebhookQueue, WebhookWorker } from '../../src/webhook/bullmq/index.js'
import { StoredJob } from '../../src/webhook/bullmq/stored-job.js'
import { startRedis } from '../helpers/redis.js'
import { redisForFile } from '../helpers/redis-suite.js'
import { useSinks } from '../helpers/sink.js'

const redis = redisForFile()
const sink = useSinks()
const open: Array<{ close(): Promise<void> }> = []
const restores: Array<() => void> = []
afterEach(async () => {
  for (const restore of restores.splice(0)) restore()
  await Promise.all(open.splice(0).map((item) => item.close()))
})

let names = 0
const connection = (port = redis.server.port) => ({ host: '127.0.0.1', port, maxRetriesPerRequest: null })

function queue(port?: number): { producer: WebhookQueue; name: string } {
  const name = `faults-${++names}`
  const producer = new WebhookQueue({ connection: connection(port), name })
  open.push(producer)
  return { producer, name }
}

function worker(name: string, url: string, port?: number): { hub: WebhookWorker; errors: Error[] } {
  const hub = new WebhookWorker(
    { webhooks: [{ url }], backoff: () => 50 },
    { connection: connection(port), name, lockDuration: 1_000, stalledInterval: 500 },
  )
  const errors: Error[] = []
  hub.on('error', (error) => errors.push(error))
  open.push(hub)
  return { hub, errors }
}

/** Makes BullMQ's `method` of every job throw `reply` the first `times` times it is called. */
function refuseOnce(method: 'moveToCompleted' | 'updateData', reply: string, times = 1): { refused: () => number } {
  const prototype = StoredJob.prototype as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>
  const original = prototype[method] as (...args: unknown[]) => Promise<unknown>
  let refused = 0
  prototype[method] = async function (this: unknown, ...args: unknown[]) {
    if (refused < times) {
      refused++
      throw new ReplyError(reply)
    }
    return original.apply(this, args)
  }
  restores.push(() => {
    prototype[method] = original
  })
  return { refused: () => refused }
}

/** Resolves once nothing of the queue waits, runs or is delayed. */
async function drained(producer: WebhookQueue): Promise<void> {
  await vi.waitFor(
    async () => {
      const { waiting, delayed, active } = await producer.counts()
      expect(waiting + delayed + active).toBe(0)
    },
    { timeout: 15_000, interval: 100 },
  )
}

const event = (id: string) => ({ type: 'track', messageId: id, userId: 'u1', event: 'Paid' }) as const

describe.runIf(redis.available)('Redis faults under a worker', () => {
  it('a delivered job whose completion Redis refused is taken again and completed, never a dead letter', async () => {
    const receiver = await sink()
    const { producer, name } = queue()
    const completion = refuseOnce('moveToCompleted', 'CLUSTERDOWN The cluster is down')
    await producer.enqueue(event('refused-completion'))
    const { hub, errors } = worker(name, receiver.url)
    const failed: unknown[] = []
    hub.on('failed', (result) => failed.push(result))
    await hub.ready()
    // At least once: the first delivery's completion was refused, so the job is run again.
    await vi.waitFor(() => expect(receiver.requests.length).toBe(2), { timeout: 15_000 })
    await drained(producer)
    expect(completion.refused()).toBe(1)
    expect(receiver.requests.length).toBe(2)
    expect((await producer.counts()).failed).toBe(0)
    expect(await producer.deadLetters()).toEqual([])
    expect(failed).toEqual([])
    expect(errors.some((error) => /CLUSTERDOWN/.test(error.message))).toBe(true)
  })

  it('a retry whose state write Redis refused is taken again and delivered once the receiver recovers, never a dead letter', async () => {
    const receiver = await sink((_request, index) => ({ status: index === 0 ? 503 : 200 }))
    const { producer, name } = queue()
    const write = refuseOnce('updateData', "READONLY You can't write against a read only replica.")
    await producer.enqueue(event('refused-state'))
    const { hub, errors } = worker(name, receiver.url)
    await hub.ready()
    await vi.waitFor(() => expect(receiver.delivered()).toHaveLength(1), { timeout: 15_000 })
    await drained(producer)
    expect(write.refused()).toBe(1)
    expect(receiver.requests.length).toBe(2)
    expect(await producer.deadLetters()).toEqual([])
    const fault = errors.find((error) => error instanceof RedisFaultError)
    expect(fault).toMatchObject({ code: 'ERR_REDIS_FAULT', jobId: expect.any(String) })
    expect((fault as Error).cause).toBeInstanceOf(ReplyError)
  })

  it('a full Redis stops the worker with one RedisFaultError, and it delivers every event once Redis takes writes', async () => {
    const receiver = await sink()
    const { producer, name } = queue()
    for (let index = 0; index < 20; index++) await producer.enqueue(event(`full-${index}`))
    await redis.raw.config('SET', 'maxmemory', '1')
    restores.push(() => void redis.raw.config('SET', 'maxmemory', '0'))
    const { hub, errors } = worker(name, receiver.url)
    const full = new Promise<RedisFaultError>((resolve) =>
      hub.on('error', (error) => {
        if (error instanceof RedisFaultError && error.jobId === undefined) resolve(error)
      }),
    )
    await hub.ready()
    const fault = await full
    expect(fault.message).toMatch(/Redis is full.*maxmemory/)
    expect(String((fault.cause as Error).message)).toMatch(/^OOM/)
    await redis.raw.config('SET', 'maxmemory', '0')
    await vi.waitFor(() => expect(receiver.requests.length).toBeGreaterThanOrEqual(20), { timeout: 15_000 })
    await drained(producer)
    // One report for the whole episode, not one per refused command.
    expect(
      errors.filter((error) => /OOM/.test(error.message) || (error.cause as Error)?.message?.startsWith('OOM')),
    ).toEqual([fault])
    expect(await producer.deadLetters()).toEqual([])
  })

  it('close() resolves by its timeout when Redis is gone, and the job in progress stays in Redis', async () => {
    const own = await startRedis({ persistent: true })
    try {
      const receiver = await sink(() => ({ status: 200, delayMs: 60_000 }))
      const { producer, name } = queue(own.port)
      await producer.enqueue(event('in-progress'))
      const { hub } = worker(name, receiver.url, own.port)
      await hub.ready()
      await vi.waitFor(() => expect(receiver.requests.length).toBe(1))
      await own.stop('SIGKILL')
      await expect(hub.close({ timeout: 200 })).resolves.toBeUndefined()
      await own.restart()
      const jobs = await producer.counts()
      expect(jobs.active + jobs.waiting + jobs.delayed).toBe(1)
    } finally {
      await Promise.all(open.splice(0).map((item) => item.close()))
      await own.dispose()
    }
  })
})
