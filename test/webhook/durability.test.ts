// Durable mode states what it needs from Redis and checks it: persistence at start, connection
// errors as events, and an enqueue() that gives up in bounded time while Redis is down.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { OptionsError } from '../../src/core/errors/options-error.js'
import {
  RedisTimeoutError,
  WebhookQueue,
  WebhookWorker,
  type WebhookQueueOptions,
  type WebhookWorkerOptions,
} from '../../src/webhook/bullmq/index.js'
import { freePort } from '../helpers/ports.js'
import { startRedis, type RedisOptions, type RedisServer } from '../helpers/redis.js'
import { isInstalled, REDIS } from '../helpers/services.js'
import { startSink } from '../helpers/sink.js'

const withRedis = isInstalled(REDIS.executable)
const open: Array<{ close(): Promise<void> }> = []
const servers: RedisServer[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()))
  await Promise.all(servers.splice(0).map((server) => server.dispose()))
  vi.restoreAllMocks()
})

async function redisWith(options: RedisOptions): Promise<RedisServer> {
  const server = await startRedis(options)
  servers.push(server)
  return server
}

function queueOn(
  port: number,
  options: Partial<WebhookQueueOptions> = {},
): { queue: WebhookQueue; warnings: string[]; errors: Error[] } {
  const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port }, name: 'durability', ...options })
  open.push(queue)
  const warnings: string[] = []
  const errors: Error[] = []
  queue.on('warning', (message) => warnings.push(message))
  queue.on('error', (error) => errors.push(error))
  return { queue, warnings, errors }
}

function workerOn(
  port: number,
  url: string,
  options: Partial<WebhookWorkerOptions> = {},
): { worker: WebhookWorker; warnings: string[]; errors: Error[] } {
  const worker = new WebhookWorker(
    { webhooks: [{ url }] },
    { connection: { host: '127.0.0.1', port, maxRetriesPerRequest: null }, name: 'durability', ...options },
  )
  open.push(worker)
  const warnings: string[] = []
  const errors: Error[] = []
  worker.on('warning', (message) => warnings.push(message))
  worker.on('error', (error) => errors.push(error))
  return { worker, warnings, errors }
}

const event = (index: number) => ({ type: 'identify', userId: `u${index}`, messageId: `m${index}` }) as const

describe.runIf(withRedis)('the persistence check', () => {
  it('refuses, under strict (the default), a Redis with the append-only file off: nothing is stored', async () => {
    const redis = await redisWith({ persistent: false })
    const { queue } = queueOn(redis.port)
    const refusal = await queue.ready().catch((error: unknown) => error)
    expect(refusal).toBeInstanceOf(OptionsError)
    expect(refusal).toMatchObject({ code: 'ERR_INVALID_OPTION', option: 'durability' })
    expect((refusal as Error).message).toMatch(/appendonly no.*appendonly yes.*durability: 'best-effort'/)
    await expect(queue.enqueue(event(1))).rejects.toBeInstanceOf(OptionsError)
    expect((await queue.counts()).waiting).toBe(0)
  })

  it('refuses, under strict, to take jobs from such a Redis: ready() rejects and the refusal is an error event', async () => {
    const redis = await redisWith({ persistent: false })
    const sink = await startSink()
    open.push(sink)
    const { queue } = queueOn(redis.port, { durability: 'best-effort' })
    await queue.enqueue(event(1))
    const { worker, errors } = workerOn(redis.port, sink.url)
    await expect(worker.ready()).rejects.toMatchObject({ code: 'ERR_INVALID_OPTION', option: 'durability' })
    expect(errors).toHaveLength(1)
    expect(errors[0]).toBeInstanceOf(OptionsError)
    expect((await queue.counts()).waiting).toBe(1)
    expect(sink.requests).toHaveLength(0)
  })

  it('warns once under best-effort, then stores and delivers', async () => {
    const redis = await redisWith({ persistent: false })
    const sink = await startSink()
    open.push(sink)
    const { queue, warnings: queueWarnings } = queueOn(redis.port, { durability: 'best-effort' })
    const { worker, warnings: workerWarnings } = workerOn(redis.port, sink.url, { durability: 'best-effort' })
    await worker.ready()
    for (let index = 0; index < 3; index++) await queue.enqueue(event(index))
    await expect.poll(() => sink.requests.length, { timeout: 10_000 }).toBe(3)
    expect(queueWarnings).toHaveLength(1)
    expect(queueWarnings[0]).toMatch(
      /WebhookQueue.*best-effort.*appendonly no: a Redis restart loses every event acknowledged/,
    )
    expect(workerWarnings).toHaveLength(1)
    expect(workerWarnings[0]).toMatch(/WebhookWorker/)
  })

  it.each(['always', 'everysec'] as const)(
    'accepts the append-only file with appendfsync %s, without a warning',
    async (appendfsync) => {
      const redis = await redisWith({ persistent: true, appendfsync })
      const { queue, warnings } = queueOn(redis.port)
      await queue.ready()
      expect((await queue.enqueue(event(1))).status).toBe('queued')
      expect(warnings).toEqual([])
    },
  )

  it('refuses appendfsync no under strict: a machine crash would lose what the OS had not flushed', async () => {
    const redis = await redisWith({ persistent: true, appendfsync: 'no' })
    const { queue } = queueOn(redis.port)
    await expect(queue.ready()).rejects.toThrow(/appendfsync no/)
  })

  it('reads INFO persistence where CONFIG is disabled (managed Redis)', async () => {
    const off = await redisWith({ persistent: false, withoutConfig: true })
    await expect(queueOn(off.port).queue.ready()).rejects.toThrow(/appendonly no/)
    const on = await redisWith({ persistent: true, withoutConfig: true })
    const { queue, warnings } = queueOn(on.port)
    await queue.ready()
    expect(warnings).toEqual([])
  })

  it('refuses, under strict, a Redis that evicts keys when full, naming maxmemory-policy noeviction', async () => {
    const redis = await redisWith({ persistent: true, appendfsync: 'everysec', maxmemoryPolicy: 'allkeys-lru' })
    const { queue } = queueOn(redis.port)
    const refusal = await queue.ready().catch((error: unknown) => error)
    expect(refusal).toMatchObject({ code: 'ERR_INVALID_OPTION', option: 'durability' })
    expect((refusal as Error).message).toMatch(
      /maxmemory-policy allkeys-lru: once it reaches maxmemory it evicts keys.*set maxmemory-policy noeviction/,
    )
    await expect(queue.enqueue(event(1))).rejects.toBeInstanceOf(OptionsError)
    const sink = await startSink()
    open.push(sink)
    await expect(workerOn(redis.port, sink.url).worker.ready()).rejects.toThrow(/maxmemory-policy allkeys-lru/)
  })

  it('names every weakness at once: no append-only file and an evicting policy', async () => {
    const redis = await redisWith({ persistent: false, maxmemoryPolicy: 'volatile-lru' })
    const { queue, warnings } = queueOn(redis.port, { durability: 'best-effort' })
    await queue.ready()
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/appendonly no.*; and it has maxmemory-policy volatile-lru.*appendonly yes.*noeviction/)
  })

  it('reads the policy from INFO memory where CONFIG is disabled', async () => {
    const redis = await redisWith({ persistent: true, withoutConfig: true, maxmemoryPolicy: 'allkeys-random' })
    await expect(queueOn(redis.port).queue.ready()).rejects.toThrow(/maxmemory-policy allkeys-random/)
  })

  it('refuses a durability it does not know, at once', () => {
    expect(() => new WebhookQueue({ connection: {}, durability: 'lax' as never })).toThrow(OptionsError)
    expect(
      () =>
        new WebhookWorker(
          { webhooks: [{ url: 'http://127.0.0.1:1' }] },
          { connection: {}, durability: 'lax' as never },
        ),
    ).toThrow(/'strict' or 'best-effort'/)
  })
})

describe.runIf(withRedis)('what a Redis crash keeps of 300 acknowledged events', () => {
  // SIGKILL: Redis gets no chance to save; only what it wrote before acknowledging survives.
  it.each([
    ['no append-only file (Redis’s default)', { persistent: false }, 'best-effort', 0],
    ['the append-only file, appendfsync everysec', { persistent: true, appendfsync: 'everysec' }, 'strict', 300],
    ['the append-only file, appendfsync always', { persistent: true, appendfsync: 'always' }, 'strict', 300],
  ] as const)('with %s', async (_case, persistence, durability, kept) => {
    const redis = await redisWith(persistence)
    const { queue } = queueOn(redis.port, { durability })
    for (let index = 0; index < 300; index++) await queue.enqueue(event(index))
    expect((await queue.counts()).waiting).toBe(300)
    await queue.close()
    await redis.stop('SIGKILL')
    await redis.restart()
    const { queue: after } = queueOn(redis.port, { durability })
    expect((await after.counts()).waiting).toBe(kept)
  })
})

describe.runIf(withRedis)('Redis down', () => {
  it('reports connection errors as error events, and nothing on stderr', async () => {
    const stderr = vi.spyOn(process.stderr, 'write')
    const consoleError = vi.spyOn(console, 'error')
    const { queue, errors } = queueOn(await freePort(), { enqueueTimeout: 300 })
    await expect(queue.ready()).rejects.toBeInstanceOf(RedisTimeoutError)
    await expect.poll(() => errors.length).toBeGreaterThan(0)
    expect(errors[0]?.message).toMatch(/ECONNREFUSED/)
    expect(stderr).not.toHaveBeenCalled()
    expect(consoleError).not.toHaveBeenCalled()
  })

  it('writes connection errors as one line each when nobody listens', async () => {
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: await freePort() }, enqueueTimeout: 300 })
    open.push(queue)
    await expect(queue.enqueue(event(1))).rejects.toBeInstanceOf(RedisTimeoutError)
    await expect.poll(() => consoleError.mock.calls.length).toBeGreaterThan(0)
    expect(consoleError.mock.calls[0]).toEqual(['eventwire: webhook queue:', expect.stringMatching(/ECONNREFUSED/)])
  })

  it('bounds enqueue() while Redis is stopped with a typed error, and stores once when it is back', async () => {
    const redis = await redisWith({ persistent: true, appendfsync: 'everysec' })
    const { queue, errors } = queueOn(redis.port, { enqueueTimeout: 500 })
    await queue.enqueue(event(0))
    await redis.stop()
    await expect.poll(() => errors.length, { timeout: 10_000 }).toBeGreaterThan(0)

    const failure = await queue.enqueue(event(1)).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(RedisTimeoutError)
    expect(failure).toMatchObject({ code: 'ERR_TIMEOUT', timeoutMs: 500 })
    expect((failure as Error).message).toMatch(
      /Could not store event "m1" in Redis within 500 ms \(last error: .*ECONNREFUSED.*\)\. Check that Redis is up/,
    )
    expect((failure as Error).cause).toBeInstanceOf(Error)
    expect((failure as Error).message).toContain(
      "then enqueue it again with the same messageId: an id is stored once, and answers 'duplicate' when the first try reached Redis",
    )

    await redis.restart()
    // Enqueueing again is safe: the same messageId is stored once. The first call, kept by ioredis
    // while Redis was down, may have got through late: then this one answers 'duplicate'.
    await expect
      .poll(
        () =>
          queue.enqueue(event(1)).then(
            (result) => result.status,
            () => 'failed',
          ),
        { timeout: 10_000 },
      )
      .toMatch(/^(queued|duplicate)$/)
    expect((await queue.counts()).waiting).toBe(2)
  })
})

describe.runIf(withRedis)('a timed-out enqueue() of an event without a messageId', () => {
  it('does not advise a plain retry: without a messageId a second enqueue is a second event', async () => {
    const { queue } = queueOn(await freePort(), { enqueueTimeout: 300 })
    const failure = await queue.enqueue({ type: 'identify', userId: 'u9' }).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(RedisTimeoutError)
    expect((failure as Error).message).toContain('give events a messageId before enqueueing them again')
    expect((failure as Error).message).not.toContain('then try again')
  })
})

describe.runIf(withRedis)('close() while Redis is down', () => {
  it('settles', async () => {
    const redis = await redisWith({ persistent: true, appendfsync: 'everysec' })
    const { queue } = queueOn(redis.port, { enqueueTimeout: 300 })
    await queue.enqueue(event(0))
    await redis.stop()
    await expect(queue.enqueue(event(1))).rejects.toBeInstanceOf(RedisTimeoutError)
    await queue.close()
  })
})
