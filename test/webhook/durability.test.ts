// Durable mode states what it needs from Redis and checks it: persistence at start, connection
// errors as events, and an enqueue() that gives up in bounded time while Redis is down.
import { Redis, ReplyError } from 'ioredis'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { OptionsError } from '../../src/core/errors/options-error.js'
import { readPersistence } from '../../src/webhook/bullmq/durability.js'
import { watchTiming } from '../../src/webhook/bullmq/durability-watch.js'
import {
  RedisTimeoutError,
  WebhookQueue,
  WebhookWorker,
  type WebhookQueueOptions,
  type WebhookWorkerOptions,
} from '../../src/webhook/bullmq/index.js'
import { freePort } from '../helpers/ports.js'
import { redisPerTest } from '../helpers/redis-suite.js'
import { isInstalled, REDIS } from '../helpers/services.js'
import { startSink } from '../helpers/sink.js'

const withRedis = isInstalled(REDIS.executable)
const { open, redisWith } = redisPerTest()
afterEach(() => {
  vi.restoreAllMocks()
})

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

describe.runIf(withRedis)('the persistence check on every reconnect', () => {
  /** A Redis that passes strict, a raw client of it, and a way to drop every other connection to it. */
  async function goodRedis(): Promise<{ raw: Redis; reconnectAll: () => Promise<void> }> {
    const redis = await redisWith({ persistent: true, appendfsync: 'everysec' })
    const raw = new Redis({ host: '127.0.0.1', port: redis.port })
    open.push({ close: async () => raw.disconnect() })
    // SKIPME yes (the default): every connection but the raw client's own drops, and ioredis reconnects them.
    return { raw, reconnectAll: async () => void (await raw.call('CLIENT', 'KILL', 'TYPE', 'normal')) }
  }
  // The dropped connections are 'error' events too (ECONNRESET): wait for the refusal itself.
  const nextRefusal = (emitter: { on(event: 'error', listener: (error: Error) => void): unknown }) =>
    new Promise<Error>((resolve) =>
      emitter.on('error', (error) => {
        if (error instanceof OptionsError) resolve(error)
      }),
    )
  const nextWarning = (emitter: { once(event: 'warning', listener: (message: string) => void): unknown }) =>
    new Promise<string>((resolve) => emitter.once('warning', resolve))

  it('refuses enqueue() once Redis comes back without the append-only file, and accepts once it has it again', async () => {
    const { raw, reconnectAll } = await goodRedis()
    const { queue } = queueOn(Number(raw.options.port))
    expect((await queue.enqueue(event(1))).status).toBe('queued')

    const refused = nextRefusal(queue)
    await raw.config('SET', 'appendonly', 'no')
    await reconnectAll()
    expect(await refused).toMatchObject({ option: 'durability' })
    const refusal = await queue.enqueue(event(2)).catch((error: unknown) => error)
    expect(refusal).toMatchObject({ code: 'ERR_INVALID_OPTION', option: 'durability' })
    expect((refusal as Error).message).toMatch(/appendonly no.*appendonly yes/)

    await raw.config('SET', 'appendonly', 'yes')
    await reconnectAll()
    await expect
      .poll(
        () =>
          queue.enqueue(event(3)).then(
            (result) => result.status,
            (error: Error) => error.message,
          ),
        {
          timeout: 10_000,
        },
      )
      .toBe('queued')
    expect((await queue.counts()).waiting).toBe(2)
  })

  it('refuses a Redis that comes back with an evicting policy, naming maxmemory-policy, until it is fixed', async () => {
    const { raw, reconnectAll } = await goodRedis()
    const { queue } = queueOn(Number(raw.options.port))
    await queue.ready()
    const refused = nextRefusal(queue)
    await raw.config('SET', 'maxmemory-policy', 'allkeys-lru')
    await reconnectAll()
    expect((await refused).message).toMatch(/maxmemory-policy allkeys-lru/)
    await expect(queue.enqueue(event(1))).rejects.toThrow(/set maxmemory-policy noeviction/)

    // Fixed with CONFIG SET, without a reconnect: a refused Redis is checked again every second.
    await raw.config('SET', 'maxmemory-policy', 'noeviction')
    await expect
      .poll(
        () =>
          queue.enqueue(event(2)).then(
            (result) => result.status,
            (error: Error) => error.message,
          ),
        {
          timeout: 10_000,
        },
      )
      .toBe('queued')
  })

  it('stops a worker taking jobs while Redis falls short, and lets it take them once Redis is fit again', async () => {
    const { raw, reconnectAll } = await goodRedis()
    const port = Number(raw.options.port)
    const sink = await startSink()
    open.push(sink)
    const { worker } = workerOn(port, sink.url)
    await worker.ready()
    const { queue } = queueOn(port, { durability: 'best-effort' })

    const refused = nextRefusal(worker)
    await raw.config('SET', 'appendonly', 'no')
    await reconnectAll()
    expect((await refused).message).toMatch(/WebhookWorker: it has appendonly no/)
    await queue.enqueue(event(1))
    // An unpaused worker takes a new job within milliseconds: 500 ms is a wide margin to see it not.
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(sink.requests).toHaveLength(0)
    expect((await queue.counts()).waiting).toBe(1)

    await raw.config('SET', 'appendonly', 'yes')
    await reconnectAll()
    await expect.poll(() => sink.requests.length, { timeout: 10_000 }).toBe(1)
  })

  it('warns under best-effort once for each setting, as each one turns bad', async () => {
    const { raw, reconnectAll } = await goodRedis()
    const { queue, warnings } = queueOn(Number(raw.options.port), { durability: 'best-effort' })
    await queue.ready()
    expect(warnings).toEqual([])

    let warned = nextWarning(queue)
    await raw.config('SET', 'appendonly', 'no')
    await reconnectAll()
    expect(await warned).toMatch(/appendonly no/)

    warned = nextWarning(queue)
    await raw.config('SET', 'maxmemory-policy', 'allkeys-lru')
    await reconnectAll()
    // The second warning names the new setting only: appendonly was named already.
    const second = await warned
    expect(second).toMatch(/maxmemory-policy allkeys-lru/)
    expect(second).not.toMatch(/appendonly/)
    expect(warnings).toHaveLength(2)
  })
})

describe.runIf(withRedis)('the persistence check while connected (CONFIG SET, no reconnect)', () => {
  const timing = { ...watchTiming }
  afterEach(() => Object.assign(watchTiming, timing))

  /** A Redis that passes strict, checked every 100 ms by what starts from now on, and a raw client of it. */
  async function watchedRedis(): Promise<Redis> {
    // The internal seam: a minute in production; the tests wait for the events, not the interval.
    watchTiming.everyMs = 100
    const redis = await redisWith({ persistent: true, appendfsync: 'everysec' })
    const raw = new Redis({ host: '127.0.0.1', port: redis.port })
    open.push({ close: async () => raw.disconnect() })
    return raw
  }
  const nextRefusal = (emitter: { on(event: 'error', listener: (error: Error) => void): unknown }) =>
    new Promise<Error>((resolve) =>
      emitter.on('error', (error) => {
        if (error instanceof OptionsError) resolve(error)
      }),
    )
  const statusOf = (queue: WebhookQueue, index: number) =>
    queue.enqueue(event(index)).then(
      (result) => result.status,
      (error: Error) => error.message,
    )

  it('refuses enqueue() under strict once appendonly is turned off, then an evicting policy, and stores again once fixed', async () => {
    const raw = await watchedRedis()
    const { queue } = queueOn(Number(raw.options.port))
    expect((await queue.enqueue(event(1))).status).toBe('queued')

    let refused = nextRefusal(queue)
    await raw.config('SET', 'appendonly', 'no')
    expect((await refused).message).toMatch(/WebhookQueue: it has appendonly no/)
    await expect(queue.enqueue(event(2))).rejects.toMatchObject({ code: 'ERR_INVALID_OPTION', option: 'durability' })

    await raw.config('SET', 'appendonly', 'yes')
    await expect.poll(() => statusOf(queue, 3), { timeout: 10_000 }).toBe('queued')

    refused = nextRefusal(queue)
    await raw.config('SET', 'maxmemory-policy', 'allkeys-lru')
    expect((await refused).message).toMatch(/maxmemory-policy allkeys-lru/)
    await expect(queue.enqueue(event(4))).rejects.toThrow(/set maxmemory-policy noeviction/)
    // Refused events were not stored: 1 and 3 only.
    expect((await queue.counts()).waiting).toBe(2)
  })

  it('stops a worker taking jobs once a setting turns bad, and lets it go on once fixed', async () => {
    const raw = await watchedRedis()
    const port = Number(raw.options.port)
    const sink = await startSink()
    open.push(sink)
    const { worker } = workerOn(port, sink.url)
    await worker.ready()
    const refused = nextRefusal(worker)
    await raw.config('SET', 'maxmemory-policy', 'allkeys-lru')
    expect((await refused).message).toMatch(/WebhookWorker: it has maxmemory-policy allkeys-lru/)

    const { queue } = queueOn(port, { durability: 'best-effort' })
    await queue.enqueue(event(1))
    await raw.config('SET', 'maxmemory-policy', 'noeviction')
    await expect.poll(() => sink.requests.length, { timeout: 10_000 }).toBe(1)
  })

  it('warns under best-effort, once, when a setting turns bad', async () => {
    const raw = await watchedRedis()
    const { queue, warnings } = queueOn(Number(raw.options.port), { durability: 'best-effort' })
    await queue.ready()
    const warned = new Promise<string>((resolve) => queue.once('warning', resolve))
    await raw.config('SET', 'appendonly', 'no')
    expect(await warned).toMatch(/best-effort.*appendonly no/)
    expect((await queue.enqueue(event(1))).status).toBe('queued')
    expect(warnings).toHaveLength(1)
  })
})

describe('reading the persistence settings', () => {
  const reply = (message: string) => new ReplyError(message) as Error

  it('falls back to INFO when Redis refuses CONFIG with a reply', async () => {
    const persistence = await readPersistence({
      config: () => Promise.reject(reply("ERR unknown command 'CONFIG'")),
      info: (section) =>
        Promise.resolve(section === 'persistence' ? 'aof_enabled:1\r\n' : 'maxmemory_policy:noeviction\r\n'),
    })
    expect(persistence).toEqual({ appendonly: true, appendfsync: undefined, maxmemoryPolicy: 'noeviction' })
  })

  it('rejects, rather than answer "could not be read", when the connection fails: Redis said nothing', async () => {
    const lost = new Error('Connection is closed.')
    await expect(
      readPersistence({ config: () => Promise.reject(lost), info: () => Promise.reject(lost) }),
    ).rejects.toBe(lost)
  })
})
