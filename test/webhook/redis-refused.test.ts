// A Redis that answers with an error reply (full, read-only, loading, a cluster down) is told
// apart from one that does not answer: RedisRefusedError (ERR_REDIS_REFUSED) as soon as it says
// no, naming the reply and the fix, with the reply as its cause; RedisTimeoutError (ERR_TIMEOUT)
// stays for a Redis that is down.
import { Redis, ReplyError } from 'ioredis'
import { describe, expect, it } from 'vitest'
import {
  RedisRefusedError,
  RedisTimeoutError,
  WebhookQueue,
  type WebhookQueueOptions,
} from '../../src/webhook/bullmq/index.js'
import { redisReplyOf, refusedBy } from '../../src/webhook/bullmq/redis-refused-error.js'
import { redisPerTest } from '../helpers/redis-suite.js'
import { isInstalled, REDIS } from '../helpers/services.js'

const withRedis = isInstalled(REDIS.executable)
const { open, redisWith } = redisPerTest()

function rawClient(port: number): Redis {
  const raw = new Redis({ host: '127.0.0.1', port })
  open.push({ close: async () => raw.disconnect() })
  return raw
}

function queueOn(port: number, options: Partial<WebhookQueueOptions> = {}): WebhookQueue {
  const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port }, name: 'refused', ...options })
  open.push(queue)
  queue.on('error', () => undefined)
  return queue
}

const big = 'x'.repeat(2_000)
const event = (id: string) => ({ type: 'track', messageId: id, userId: 'u1', event: 'E', properties: { big } }) as const

describe.runIf(withRedis)('a full Redis (maxmemory-policy noeviction)', () => {
  it('refuses enqueue() with RedisRefusedError naming OOM and the fix, its cause the OOM reply; once raised, the same id is stored', async () => {
    const redis = await redisWith({ persistent: true, appendfsync: 'everysec' })
    const raw = rawClient(redis.port)
    // A deadline far off: a refusal that came from it would say "within 30000 ms".
    const queue = queueOn(redis.port, { enqueueTimeout: 30_000 })
    await queue.ready()
    const used = Number(/^used_memory:(\d+)/m.exec(await raw.info('memory'))?.[1])
    await raw.config('SET', 'maxmemory', String(used + 256 * 1024))

    let refused: unknown
    let refusedId = ''
    // 256 KB fills within a few hundred events of 2 KB; 2,000 bounds the loop.
    for (let index = 0; index < 2_000 && refused === undefined; index++) {
      refusedId = `full-${index}`
      refused = await queue.enqueue(event(refusedId)).then(
        () => undefined,
        (error: unknown) => error,
      )
    }
    expect(refused).toBeInstanceOf(RedisRefusedError)
    const error = refused as RedisRefusedError
    expect(error).toMatchObject({ name: 'RedisRefusedError', code: 'ERR_REDIS_REFUSED' })
    expect(error.message).toMatch(
      new RegExp(
        `^Could not store event "${refusedId}" in Redis: Redis refused it \\(OOM command not allowed when used memory > 'maxmemory'.*\\)\\. Redis is full: .*A full Redis stops workers too.*Raise maxmemory \\(CONFIG SET maxmemory\\) or free memory, then enqueue it again with the same messageId`,
      ),
    )
    expect(error.message).not.toMatch(/within \d+ ms/)
    expect(error.cause).toBeInstanceOf(ReplyError)
    expect((error.cause as Error).message).toMatch(/^OOM /)

    const bulk = await queue.enqueueBulk([event('bulk-1'), event('bulk-2')]).catch((failure: unknown) => failure)
    expect(bulk).toMatchObject({ code: 'ERR_REDIS_REFUSED' })
    expect((bulk as Error).message).toMatch(/^Could not store 2 events in Redis: Redis refused it \(OOM /)

    // Nothing of the refused transaction was stored: once there is room, the same id is new.
    await raw.config('SET', 'maxmemory', '0')
    expect(await queue.enqueue(event(refusedId))).toEqual({ eventId: refusedId, status: 'queued' })
  })

  it('advises a messageId, not a plain retry, for a refused event without one', async () => {
    const redis = await redisWith({ persistent: true, appendfsync: 'everysec' })
    const raw = rawClient(redis.port)
    const queue = queueOn(redis.port)
    await queue.ready()
    const used = Number(/^used_memory:(\d+)/m.exec(await raw.info('memory'))?.[1])
    await raw.config('SET', 'maxmemory', String(used + 64 * 1024))
    let refused: unknown
    for (let index = 0; index < 2_000 && refused === undefined; index++)
      refused = await queue.enqueue({ type: 'track', userId: 'u1', event: 'E', properties: { big } }).then(
        () => undefined,
        (error: unknown) => error,
      )
    expect(refused).toMatchObject({ code: 'ERR_REDIS_REFUSED' })
    expect((refused as Error).message).toMatch(
      /or free memory, and give events a messageId before enqueueing them again: without a messageId, a second enqueue of an event Redis did store is a second event\.$/,
    )
  })

  it('still gives RedisTimeoutError (ERR_TIMEOUT) for a Redis that is down', async () => {
    const redis = await redisWith({ persistent: true, appendfsync: 'everysec' })
    const queue = queueOn(redis.port, { enqueueTimeout: 300 })
    await queue.ready()
    await redis.stop()
    const failure = await queue.enqueue(event('down')).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(RedisTimeoutError)
    expect(failure).toMatchObject({ code: 'ERR_TIMEOUT', timeoutMs: 300 })
    expect((failure as Error).message).toMatch(/within 300 ms .*Check that Redis is up and reachable/)
  })
})

describe.runIf(withRedis)('a read-only replica', () => {
  it('refuses enqueue() with READONLY, pointing at the primary', async () => {
    const primary = await redisWith({ persistent: true, appendfsync: 'everysec' })
    const replica = await redisWith({
      persistent: true,
      appendfsync: 'everysec',
      args: ['--replicaof', '127.0.0.1', String(primary.port)],
    })
    const queue = queueOn(replica.port)
    const refused = await queue.enqueue(event('replica')).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(RedisRefusedError)
    expect((refused as Error).message).toMatch(
      /Redis refused it \(READONLY You can't write against a read only replica\.[^)]*\)\. The connection reached a read-only replica/,
    )
    expect(((refused as Error).cause as Error).message).toMatch(/^READONLY/)
  })
})

describe('which errors are Redis refusing', () => {
  const reply = (message: string) => new ReplyError(message) as Error

  it('takes the reply that made Redis discard a transaction (EXECABORT), from ioredis previousErrors', () => {
    const oom = reply("OOM command not allowed when used memory > 'maxmemory'.")
    const aborted = Object.assign(reply('EXECABORT Transaction discarded because of previous errors.'), {
      previousErrors: [oom],
    })
    expect(redisReplyOf(aborted)).toBe(oom)
  })

  it.each([
    ["READONLY You can't write against a read only replica.", /read-only replica/],
    ['LOADING Redis is loading the dataset in memory', /still loading its data/],
    ['CLUSTERDOWN The cluster is down', /The Redis Cluster is down/],
    ['MOVED 3999 127.0.0.1:6381', /kept redirecting the write/],
    [
      'MISCONF Redis is configured to save RDB snapshots, but it is currently not able to persist on disk.',
      /cannot save to disk/,
    ],
    ['NOPERM this user has no permissions to run the command', /access control/],
    ['ERR something else', /Fix what the reply names/],
  ])('names %s and its fix', (message, fix) => {
    const error = refusedBy(
      redisReplyOf(reply(message)) as Error,
      'Could not store event "e" in Redis',
      'then try again',
    )
    expect(error).toMatchObject({ code: 'ERR_REDIS_REFUSED' })
    expect(error.message).toMatch(fix)
    expect(error.message.startsWith(`Could not store event "e" in Redis: Redis refused it (${message}). `)).toBe(true)
    expect(error.message.endsWith(', then try again.')).toBe(true)
  })

  it("reads a cluster command's too many redirections, which ioredis keeps as text", () => {
    const error = new Error('Too many Cluster redirections. Last error: ReplyError: CLUSTERDOWN The cluster is down')
    expect(redisReplyOf(error)).toBe(error)
    expect(refusedBy(error, 'Could not reach Redis', 'then try again').message).toMatch(
      /^Could not reach Redis: Redis refused it \(CLUSTERDOWN The cluster is down\)\. The Redis Cluster is down/,
    )
  })

  it('leaves out what is not an answer of Redis: a closed connection, a timeout, redirections that ended on one', () => {
    expect(redisReplyOf(new Error('Connection is closed.'))).toBeUndefined()
    expect(
      redisReplyOf(new Error('Too many Cluster redirections. Last error: Error: Connection is closed.')),
    ).toBeUndefined()
    expect(redisReplyOf(Object.assign(new Error('Command timed out'), { name: 'TimeoutError' }))).toBeUndefined()
    expect(redisReplyOf('OOM')).toBeUndefined()
  })
})
