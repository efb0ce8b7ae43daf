import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import {
  BulkValidationError,
  RedisTimeoutError,
  WebhookQueue,
  WebhookWorker,
  type WebhookQueueOptions,
} from '../../src/webhook/bullmq/index.js'
import { ValidationError, type WebhookSettings } from '../../src/webhook/index.js'
import { freePort } from '../helpers/ports.js'
import { redisForFile } from '../helpers/redis-suite.js'
import { startSink, type Responder, type Sink } from '../helpers/sink.js'

// What enqueue() and enqueueBulk() answer for an id Redis has seen: in flight, a dead letter, or
// delivered within the de-duplication window; and that each id is stored once however the calls race.

const redis = redisForFile()
const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()))
})

let queues = 0
let name = ''
function queue(options: Partial<WebhookQueueOptions> = {}, sameName = false): WebhookQueue {
  if (!sameName) name = `status-${++queues}`
  const created = new WebhookQueue({ connection: { host: '127.0.0.1', port: redis.server.port }, name, ...options })
  open.push(created)
  return created
}

async function worker(settings: WebhookSettings): Promise<WebhookWorker> {
  const created = new WebhookWorker(
    { backoff: () => 50, ...settings },
    { connection: { host: '127.0.0.1', port: redis.server.port, maxRetriesPerRequest: null }, name, concurrency: 5 },
  )
  open.push(created)
  await created.ready()
  return created
}

/**
 * The key of the hash that remembers `jobId` after delivery (a shard of a span of the window, see
 * remembered-ids.ts), or `undefined` when none does.
 */
async function rememberedIn(jobId: string): Promise<string | undefined> {
  for (const key of await redis.raw.keys(`bull:${name}:seen:*:*:*`)) {
    if ((await redis.raw.hexists(key, jobId)) === 1) return key
  }
  return undefined
}

async function receiver(respond?: Responder): Promise<Sink> {
  const sink = await startSink(respond)
  open.push(sink)
  return sink
}

/** A receiver that holds every request until `release()`: its event stays active meanwhile. */
async function holdingReceiver(): Promise<{ url: string; held: () => number; release(): void }> {
  const waiting: ServerResponse[] = []
  const server = createServer((request, response) => {
    request.resume()
    waiting.push(response)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const release = () => {
    for (const response of waiting.splice(0)) response.writeHead(200).end()
  }
  open.push({
    close: async () => {
      release()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, held: () => waiting.length, release }
}

const identify = (messageId: string) => ({ type: 'identify', userId: 'u1', messageId }) as const

describe.runIf(redis.available)('enqueue() of an id Redis has seen', () => {
  it("answers 'duplicate' while the event waits, is being sent, or waits for a retry, and stores nothing", async () => {
    const producer = queue()
    expect(await producer.enqueue(identify('a'))).toEqual({ eventId: 'a', status: 'queued' })
    expect(await producer.enqueue(identify('a'))).toEqual({ eventId: 'a', status: 'duplicate' })
    expect((await producer.counts()).waiting).toBe(1)

    const held = await holdingReceiver()
    const failing = await receiver(() => ({ status: 500 }))
    // The first URL holds the request (active); once released, the second URL's 500 leaves a retry.
    await worker({
      webhooks: [{ url: held.url }, { url: failing.url }],
      mode: 'each',
      timeoutMs: 60_000,
      backoff: () => 600_000,
    })
    await expect.poll(() => held.held(), { timeout: 10_000 }).toBe(1)
    expect(await producer.counts()).toMatchObject({ waiting: 0, active: 1 })
    expect((await producer.enqueue(identify('a'))).status).toBe('duplicate')

    held.release()
    await expect.poll(async () => (await producer.counts()).delayed, { timeout: 10_000 }).toBe(1)
    expect((await producer.enqueue(identify('a'))).status).toBe('duplicate')
    expect(await producer.counts()).toMatchObject({ waiting: 0, active: 0, delayed: 1 })
    expect(failing.requests).toHaveLength(1)
  })

  it("answers 'dead-letter' for a dead letter's id and sends nothing, until redrive() sends it", async () => {
    let fixed = false
    const sink = await receiver(() => ({ status: fixed ? 200 : 400 }))
    const producer = queue()
    const hub = await worker({ webhooks: [{ url: sink.url }] })
    const failed: string[] = []
    const delivered: string[] = []
    hub.on('failed', (result) => failed.push(result.eventId))
    hub.on('delivered', (result) => delivered.push(result.eventId))
    await producer.enqueue(identify('order-7'))
    await expect.poll(() => failed, { timeout: 10_000 }).toEqual(['order-7'])
    // 'failed' is told before BullMQ moves the job to its failed set: wait for the dead letter itself.
    await expect.poll(async () => (await producer.counts()).failed, { timeout: 10_000 }).toBe(1)

    fixed = true
    expect(await producer.enqueue(identify('order-7'))).toEqual({ eventId: 'order-7', status: 'dead-letter' })
    expect(await producer.counts()).toMatchObject({ waiting: 0, delayed: 0, active: 0, failed: 1 })
    expect(sink.requests).toHaveLength(1)

    expect(await producer.redrive('order-7')).toBe(true)
    await expect.poll(() => delivered, { timeout: 10_000 }).toEqual(['order-7'])
    expect(sink.requests).toHaveLength(2)
  })

  it('stores a purged dead letter’s id again: purging forgets the id', async () => {
    const sink = await receiver(() => ({ status: 400 }))
    const producer = queue()
    const hub = await worker({ webhooks: [{ url: sink.url }] })
    const failed: string[] = []
    hub.on('failed', (result) => failed.push(result.eventId))
    await producer.enqueue(identify('p'))
    await expect.poll(async () => (await producer.counts()).failed, { timeout: 10_000 }).toBe(1)
    expect(failed).toEqual(['p'])
    expect(await producer.purgeDeadLetters()).toBe(1)
    expect((await producer.enqueue(identify('p'))).status).toBe('queued')
  })

  it('stores a trimmed dead letter’s id again: a dead letter past deadLetters.maxCount is forgotten', async () => {
    const sink = await receiver(() => ({ status: 400 }))
    const producer = queue({ deadLetters: { maxCount: 1 } })
    const hub = await worker({ webhooks: [{ url: sink.url }] })
    const failed: string[] = []
    hub.on('failed', (result) => failed.push(result.eventId))
    await producer.enqueue(identify('t-1'))
    await expect.poll(() => failed, { timeout: 10_000 }).toEqual(['t-1'])
    await producer.enqueue(identify('t-2'))
    await expect.poll(() => failed, { timeout: 10_000 }).toEqual(['t-1', 't-2'])
    // The second failure trimmed the set to its one newest dead letter.
    await expect.poll(async () => (await producer.deadLetters()).map((letter) => letter.eventId)).toEqual(['t-2'])
    expect((await producer.enqueue(identify('t-2'))).status).toBe('dead-letter')
    expect((await producer.enqueue(identify('t-1'))).status).toBe('queued')
  })

  it('stores an id once when producers on separate connections enqueue it at the same time', async () => {
    const producers = [queue(), queue({}, true), queue({}, true), queue({}, true)]
    for (let round = 0; round < 5; round++) {
      const id = `race-${round}`
      const statuses = await Promise.all(
        Array.from({ length: 20 }, (_, index) => producers[index % producers.length]?.enqueue(identify(id))),
      )
      expect(statuses.filter((result) => result?.status === 'queued')).toHaveLength(1)
      expect(statuses.filter((result) => result?.status === 'duplicate')).toHaveLength(19)
    }
    expect((await producers[0]?.counts())?.waiting).toBe(5)
  })
})

describe.runIf(redis.available)('the de-duplication window after delivery', () => {
  it("answers 'duplicate' within dedupWindowMs of the delivery, and sends the id again once it has passed", async () => {
    const sink = await receiver()
    const producer = queue({ dedupWindowMs: 1_500 })
    const hub = await worker({ webhooks: [{ url: sink.url }] })
    const delivered: string[] = []
    hub.on('delivered', (result) => delivered.push(result.eventId))
    await producer.enqueue(identify('once'))
    await expect.poll(() => delivered, { timeout: 10_000 }).toEqual(['once'])
    // The job is gone (removed on completion); the id is remembered in a hash of its span.
    // 'delivered' is told before BullMQ completes the job: its removal is waited for.
    await expect.poll(() => redis.raw.exists(`bull:${name}:evt-once`), { timeout: 10_000 }).toBe(0)
    const key = (await rememberedIn('evt-once')) as string
    expect(key).toMatch(new RegExp(`^bull:${name}:seen:1500:\\d+:\\d+$`))
    expect(await redis.raw.pttl(key)).toBeGreaterThan(0)

    expect((await producer.enqueue(identify('once'))).status).toBe('duplicate')
    expect(await producer.counts()).toMatchObject({ waiting: 0, delayed: 0, active: 0 })

    // The window's end, observed: Redis expires the key.
    await expect.poll(() => redis.raw.exists(key), { timeout: 10_000, interval: 100 }).toBe(0)
    expect((await producer.enqueue(identify('once'))).status).toBe('queued')
    await expect.poll(() => delivered, { timeout: 10_000 }).toEqual(['once', 'once'])
    expect(sink.requests).toHaveLength(2)
  })

  it('remembers an id no longer than its job with dedupWindowMs: 0, and keeps no key for it', async () => {
    const sink = await receiver()
    const producer = queue({ dedupWindowMs: 0 })
    const hub = await worker({ webhooks: [{ url: sink.url }] })
    const delivered: string[] = []
    hub.on('delivered', (result) => delivered.push(result.eventId))
    await producer.enqueue(identify('twice'))
    expect((await producer.enqueue(identify('twice'))).status).toBe('duplicate')
    await expect.poll(() => delivered, { timeout: 10_000 }).toEqual(['twice'])
    expect(await rememberedIn('evt-twice')).toBeUndefined()
    expect(await redis.raw.keys(`bull:${name}:seen*`)).toEqual([])
    expect((await producer.enqueue(identify('twice'))).status).toBe('queued')
    await expect.poll(() => delivered, { timeout: 10_000 }).toEqual(['twice', 'twice'])
  })
})

describe.runIf(redis.available)('what Redis keeps for the window, and when', () => {
  it('keeps nothing for the window while an event waits; the worker writes it on delivery, counted from the delivery', async () => {
    const sink = await receiver()
    const producer = queue()
    await producer.enqueue(identify('kept'))
    // A waiting event is remembered by its job: nothing of its own, no option for it in the job.
    expect(await rememberedIn('evt-kept')).toBeUndefined()
    expect(await redis.raw.hget(`bull:${name}:evt-kept`, 'opts')).toBe(
      '{"jobId":"evt-kept","removeOnComplete":true,"attempts":0}',
    )
    const hub = await worker({ webhooks: [{ url: sink.url }] })
    const delivered: string[] = []
    hub.on('delivered', (result) => delivered.push(result.eventId))
    await expect.poll(() => delivered, { timeout: 10_000 }).toEqual(['kept'])
    const deliveredAt = Date.now()
    await expect.poll(() => redis.raw.exists(`bull:${name}:evt-kept`), { timeout: 10_000 }).toBe(0)
    // The default window (24 hours), timed by Redis from the delivery: at least the window, at
    // most a span (a quarter of it) more, and not less by what the producer's or the worker's clock says.
    const key = (await rememberedIn('evt-kept')) as string
    const left = await redis.raw.pttl(key)
    expect(left).toBeLessThanOrEqual(86_400_000 + 21_600_000)
    expect(left).toBeGreaterThan(86_400_000 - (Date.now() - deliveredAt) - 1_000)
    expect(await redis.raw.hget(key, 'evt-kept')).toBe('')
  })

  it('stores nothing for an id remembered after delivery, in enqueue() and enqueueBulk(), and leaves no trace of the check', async () => {
    const sink = await receiver()
    const producer = queue()
    const hub = await worker({ webhooks: [{ url: sink.url }] })
    const delivered: string[] = []
    hub.on('delivered', (result) => delivered.push(result.eventId))
    await producer.enqueue(identify('done'))
    await expect.poll(() => delivered, { timeout: 10_000 }).toEqual(['done'])
    await expect.poll(() => redis.raw.exists(`bull:${name}:evt-done`), { timeout: 10_000 }).toBe(0)
    expect((await producer.enqueue(identify('done'))).status).toBe('duplicate')
    const bulk = await producer.enqueueBulk([identify('done'), identify('fresh'), identify('done')])
    expect(bulk.map((result) => result.status)).toEqual(['duplicate', 'queued', 'duplicate'])
    await expect.poll(() => delivered, { timeout: 10_000 }).toEqual(['done', 'fresh'])
    expect(sink.requests).toHaveLength(2)
    // Only the id remembered: no job.
    expect(await redis.raw.exists(`bull:${name}:evt-done`)).toBe(0)
    expect(await rememberedIn('evt-done')).toBeDefined()
  })

  it('keeps the ids of one span in small hashes, with as many shards as they need, and finds every one', async () => {
    const sink = await receiver()
    const producer = queue()
    const hub = await worker({ webhooks: [{ url: sink.url }] })
    let delivered = 0
    hub.on('delivered', () => delivered++)
    const events = Array.from({ length: 3_000 }, (_, index) => identify(`many-${index}`))
    for (let at = 0; at < events.length; at += 500) await producer.enqueueBulk(events.slice(at, at + 500))
    await expect.poll(() => delivered, { timeout: 60_000 }).toBe(events.length)
    await expect.poll(async () => (await producer.counts()).active, { timeout: 10_000 }).toBe(0)
    const again = await producer.enqueueBulk(events.slice(0, 1_000))
    expect(again.every((result) => result.status === 'duplicate')).toBe(true)
    expect((await producer.enqueueBulk(events.slice(1_000))).every((result) => result.status === 'duplicate')).toBe(
      true,
    )
    // The span began with one shard (no span before it) and took four times as many each time its
    // shards held twice their share: every layout is looked up, and no hash grew past the
    // listpack Redis keeps small hashes in.
    const shards = await redis.raw.keys(`bull:${name}:seen:*:*:*`)
    expect(shards.length).toBeGreaterThan(64)
    let bytes = 0
    for (const key of shards) {
      expect(await redis.raw.object('ENCODING', key)).toBe('listpack')
      bytes += Number(await redis.raw.memory('USAGE', key, 'SAMPLES', '0'))
    }
    // Within the budget docs/durable-delivery.md gives an id (its hash, key and value included).
    expect(bytes / events.length).toBeLessThan(50)
    expect(sink.requests).toHaveLength(events.length)
  })

  it("finds an id remembered under another producer's window", async () => {
    const sink = await receiver()
    const shortWindow = queue({ dedupWindowMs: 60_000 })
    const hub = await worker({ webhooks: [{ url: sink.url }] })
    const delivered: string[] = []
    hub.on('delivered', (result) => delivered.push(result.eventId))
    await shortWindow.enqueue(identify('shared'))
    await expect.poll(() => delivered, { timeout: 10_000 }).toEqual(['shared'])
    await expect.poll(() => rememberedIn('evt-shared'), { timeout: 10_000 }).toMatch(/:seen:60000:/)
    const defaultWindow = queue({}, true)
    expect((await defaultWindow.enqueue(identify('shared'))).status).toBe('duplicate')
  })

  it('leaves the key of an event enqueued with BullMQ deduplication (by an earlier version) as BullMQ set it', async () => {
    const sink = await receiver()
    const producer = queue()
    await producer.ready()
    const { Queue } = await import('bullmq')
    const earlier = new Queue(name, { connection: { host: '127.0.0.1', port: redis.server.port } })
    open.push(earlier)
    const body = JSON.stringify({ version: 1, type: 'identify', userId: 'u1', timestamp: new Date().toISOString() })
    await earlier.add(
      'deliver',
      { eventId: 'old', body },
      { jobId: 'evt-old', removeOnComplete: true, deduplication: { id: 'evt-old', ttl: 60_000 } },
    )
    const hub = await worker({ webhooks: [{ url: sink.url }] })
    const delivered: string[] = []
    hub.on('delivered', (result) => delivered.push(result.eventId))
    await expect.poll(() => delivered, { timeout: 10_000 }).toEqual(['old'])
    await expect.poll(() => redis.raw.exists(`bull:${name}:evt-old`), { timeout: 10_000 }).toBe(0)
    expect(await redis.raw.pttl(`bull:${name}:de:evt-old`)).toBeLessThanOrEqual(60_000)
    expect((await producer.enqueue(identify('old'))).status).toBe('duplicate')
  })
})

describe.runIf(redis.available)('enqueueBulk()', () => {
  it('answers per event, in order: new, repeated in the call, in Redis, a dead letter, skipped', async () => {
    const sink = await receiver(() => ({ status: 400 }))
    const producer = queue()
    const hub = await worker({ webhooks: [{ url: sink.url }] })
    const failed: string[] = []
    hub.on('failed', (result) => failed.push(result.eventId))
    await producer.enqueue(identify('dead'))
    await expect.poll(() => failed, { timeout: 10_000 }).toEqual(['dead'])
    await hub.close()
    await producer.enqueue(identify('waiting'))

    const results = await producer.enqueueBulk([
      identify('new-1'),
      identify('new-1'),
      identify('waiting'),
      identify('dead'),
      identify('dead'),
      identify('waiting'),
      { type: 'identify', userId: 'u1', messageId: 'off', integrations: { Webhooks: false } },
      identify('new-2'),
    ])
    // Every copy of an id answers what Redis had of it: a dead letter's copies are all dead letters.
    expect(results).toEqual([
      { eventId: 'new-1', status: 'queued' },
      { eventId: 'new-1', status: 'duplicate' },
      { eventId: 'waiting', status: 'duplicate' },
      { eventId: 'dead', status: 'dead-letter' },
      { eventId: 'dead', status: 'dead-letter' },
      { eventId: 'waiting', status: 'duplicate' },
      { eventId: 'off', status: 'skipped' },
      { eventId: 'new-2', status: 'queued' },
    ])
    expect(await producer.counts()).toMatchObject({ waiting: 3, failed: 1 })
  })

  it('checks every event first: one that breaks a rule rejects the call with its index, and nothing is stored', async () => {
    const producer = queue()
    const failure = await producer
      .enqueueBulk([identify('b-1'), { type: 'track', userId: 'u1' } as never, identify('b-3')])
      .catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(BulkValidationError)
    expect(failure).toBeInstanceOf(ValidationError)
    expect(failure).toMatchObject({ index: 1, code: 'ERR_MISSING_EVENT', field: 'event' })
    expect((failure as Error).message).toMatch(/^events\[1\]: .*Nothing was stored\.$/)
    expect((failure as Error).cause).toBeInstanceOf(ValidationError)
    expect((await producer.counts()).waiting).toBe(0)
    await expect(producer.enqueueBulk('nope' as never)).rejects.toMatchObject({ field: 'events' })
    expect(await producer.enqueueBulk([])).toEqual([])
  })

  it('stores 2,500 events in transactions of 1,000, a repeat across them once, and a worker delivers each once', async () => {
    const sink = await receiver()
    const producer = queue()
    const events = Array.from({ length: 2_500 }, (_, index) => identify(`bulk-${index === 2_400 ? 7 : index}`))
    const results = await producer.enqueueBulk(events)
    expect(results.filter((result) => result.status === 'queued')).toHaveLength(2_499)
    expect(results[2_400]).toEqual({ eventId: 'bulk-7', status: 'duplicate' })
    expect((await producer.enqueueBulk(events)).every((result) => result.status === 'duplicate')).toBe(true)
    expect((await producer.counts()).waiting).toBe(2_499)
    await worker({ webhooks: [{ url: sink.url }] })
    await expect.poll(() => sink.requests.length, { timeout: 60_000 }).toBe(2_499)
    expect(new Set(sink.requests.map((request) => request.headers['webhook-id'])).size).toBe(2_499)
    // Every delivered id is remembered (the worker writes those of one turn in one command), so
    // all of them answer 'duplicate' once their jobs are gone.
    await expect.poll(async () => (await producer.counts()).active, { timeout: 10_000 }).toBe(0)
    const again = await producer.enqueueBulk(events)
    expect(again.every((result) => result.status === 'duplicate')).toBe(true)
    expect((await producer.counts()).waiting).toBe(0)
  })

  it('gathers the enqueue() calls of one turn, and answers each caller for its own events', async () => {
    const producer = queue()
    const results = await Promise.all([
      producer.enqueue(identify('g-1')),
      producer.enqueueBulk([identify('g-2'), identify('g-1')]),
      producer.enqueue(identify('g-2')),
      producer.enqueue({ type: 'identify', userId: 'u1', messageId: 'g-3', integrations: { Webhooks: false } }),
    ])
    expect(results).toEqual([
      { eventId: 'g-1', status: 'queued' },
      [
        { eventId: 'g-2', status: 'queued' },
        { eventId: 'g-1', status: 'duplicate' },
      ],
      { eventId: 'g-2', status: 'duplicate' },
      { eventId: 'g-3', status: 'skipped' },
    ])
    expect((await producer.counts()).waiting).toBe(2)
  })
})

describe.runIf(redis.available)('the advice of a timed-out enqueue', () => {
  /** What enqueue() or enqueueBulk() advises when Redis never answers. */
  async function adviceOf(
    store: (queue: WebhookQueue) => Promise<unknown>,
    options: Partial<WebhookQueueOptions> = {},
  ) {
    const unreachable = new WebhookQueue({
      connection: { host: '127.0.0.1', port: await freePort() },
      enqueueTimeout: 300,
      ...options,
    })
    unreachable.on('error', () => undefined)
    open.push(unreachable)
    const failure = await store(unreachable).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(RedisTimeoutError)
    return (failure as Error).message
  }

  it('tells to enqueue the same events again, and what a duplicate answer means', async () => {
    const message = await adviceOf((queue) => queue.enqueueBulk([identify('t-1'), identify('t-2')]))
    expect(message).toContain('Could not store 2 events in Redis within 300 ms (last error: connect ECONNREFUSED')
    expect(message).toContain(
      "then enqueue them again with the same messageIds: an id is stored once, and answers 'duplicate' when the first try reached Redis",
    )
  })

  it('says that without a window a delivered event would be sent again', async () => {
    expect(await adviceOf((queue) => queue.enqueue(identify('t-3')), { dedupWindowMs: 0 })).toContain(
      'an id is stored once while its event is in Redis, but with dedupWindowMs 0 one already delivered is sent again',
    )
  })

  it('asks for messageIds when one event of a bulk has none', async () => {
    const message = await adviceOf((queue) => queue.enqueueBulk([identify('t-4'), { type: 'identify', userId: 'u1' }]))
    expect(message).toContain('give events a messageId before enqueueing them again: these may still be stored')
  })
})
