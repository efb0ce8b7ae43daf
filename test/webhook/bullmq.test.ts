import { createHmac } from 'node:crypto'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { Webhook as StandardWebhook } from 'standardwebhooks'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { z } from 'zod'
import { definePlan } from '../../src/index.js'
import { WebhookQueue, WebhookWorker, type WebhookQueueOptions } from '../../src/webhook/bullmq/index.js'
import {
  generateStandardSecret,
  toWebhookPayload,
  ValidationError,
  type WebhookSettings,
} from '../../src/webhook/index.js'
import { startChaosSink } from '../helpers/chaos-sink.js'
import { freePort } from '../helpers/ports.js'
import { startRedis, type RedisServer } from '../helpers/redis.js'
import { isInstalled, REDIS } from '../helpers/services.js'
import { startHostileReceiver } from '../helpers/hostile-receiver.js'
import { startSink, type ReceivedRequest, type Responder, type Sink } from '../helpers/sink.js'

let redis: RedisServer
let name = ''
const open: Array<{ close(): Promise<void> }> = []

// Without redis-server these suites are skipped, and the global setup says so (or fails under CI).
const withRedis = isInstalled(REDIS.executable)
beforeAll(async () => {
  // The append-only file on, as durability: 'strict' (the default) requires.
  if (withRedis) redis = await startRedis({ persistent: true, appendfsync: 'everysec' })
})
afterAll(async () => {
  if (withRedis) await redis.dispose()
})
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()))
})

let queues = 0
function queue(options: Partial<WebhookQueueOptions> = {}): WebhookQueue {
  name = `test-${++queues}`
  const created = new WebhookQueue({ connection: { host: '127.0.0.1', port: redis.port }, name, ...options })
  open.push(created)
  return created
}

async function worker(settings: WebhookSettings): Promise<WebhookWorker> {
  const created = new WebhookWorker(
    { backoff: () => 50, ...settings },
    { connection: { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null }, name, concurrency: 10 },
  )
  open.push(created)
  await created.ready()
  return created
}

async function receiver(respond?: Responder): Promise<Sink> {
  const sink = await startSink(respond)
  open.push(sink)
  return sink
}

describe.runIf(withRedis)('durable delivery on BullMQ and a real Redis', () => {
  it('closes a worker whose receiver answered and then trickles its body', async () => {
    // Before every attempt had one deadline for headers and body, close() waited for the body.
    const trickling = await startHostileReceiver('slow-body')
    open.push(trickling)
    const producer = queue()
    const hub = await worker({ webhooks: [{ url: trickling.url }] })
    await producer.enqueue({ type: 'track', userId: 'u1', event: 'Paid' })
    await trickling.received(1)
    await hub.close()
    expect(trickling.requests()).toBe(1)
  })

  it('delivers with the same bytes, headers and signature as the in-memory engine', async () => {
    const sink = await receiver()
    const producer = queue()
    await worker({ webhooks: [{ url: `${sink.url}/in`, headers: { 'X-Team': 'data' } }], sharedSecret: 's3cret' })
    const event = {
      type: 'track',
      userId: 'u1',
      event: 'Paid',
      messageId: 'evt:1',
      timestamp: '2024-01-01T00:00:00.000Z',
    } as const
    expect(await producer.enqueue(event)).toEqual({ eventId: 'evt:1', status: 'queued' })
    await expect.poll(() => sink.requests.length, { timeout: 10_000 }).toBe(1)
    const [request] = sink.requests
    expect(request?.body).toBe(JSON.stringify(toWebhookPayload(event)))
    expect(request?.headers['content-type']).toBe('application/json')
    expect(request?.headers['user-agent']).toMatch(/\/1\.0$/)
    expect(request?.headers['x-team']).toBe('data')
    expect(request?.headers['webhook-id']).toBe('evt:1')
    expect(request?.headers['x-signature']).toBe(
      createHmac('sha1', 's3cret')
        .update(request?.raw ?? '')
        .digest('hex'),
    )
  })

  it('validates at the producer and skips events whose integrations turn Webhooks off', async () => {
    const producer = queue()
    await expect(producer.enqueue({ type: 'track', userId: 'u1' } as never)).rejects.toBeInstanceOf(ValidationError)
    expect((await producer.enqueue({ type: 'identify', userId: 'u1', integrations: { Webhooks: false } })).status).toBe(
      'skipped',
    )
    expect(await producer.counts()).toMatchObject({ waiting: 0, delayed: 0, active: 0, failed: 0 })
  })

  it('checks events against a plan at the producer: refuses what breaks it, stores the schema output', async () => {
    const plan = definePlan({ events: { Paid: z.object({ total: z.number(), currency: z.string().default('EUR') }) } })
    const sink = await receiver()
    name = `test-${++queues}`
    const producer = new WebhookQueue({ connection: { host: '127.0.0.1', port: redis.port }, name, plan })
    open.push(producer)
    await expect(
      // @ts-expect-error: the plan's type for total
      producer.enqueue({ type: 'track', userId: 'u1', event: 'Paid', properties: { total: 'x' } }),
    ).rejects.toMatchObject({ code: 'ERR_PLAN_VIOLATION', field: 'properties.total' })
    expect(await producer.counts()).toMatchObject({ waiting: 0, delayed: 0, active: 0, failed: 0 })
    const { status } = await producer.enqueue({ type: 'track', userId: 'u1', event: 'Paid', properties: { total: 5 } })
    expect(status).toBe('queued')
    await worker({ webhooks: [{ url: sink.url }] })
    await vi.waitFor(() => expect(sink.requests).toHaveLength(1))
    expect(JSON.parse(sink.requests[0]?.body ?? '{}').properties).toEqual({ total: 5, currency: 'EUR' })
  })

  it('stores an event enqueued twice with the same messageId once', async () => {
    const producer = queue()
    await producer.enqueue({ type: 'identify', userId: 'u1', messageId: 'same' })
    await producer.enqueue({ type: 'identify', userId: 'u1', messageId: 'same' })
    expect((await producer.counts()).waiting).toBe(1)
  })

  it('retries a 500 as a delayed job, keeps the body and signature, and follows the any-URL rule', async () => {
    const flaky = await receiver((_request, index) => ({ status: index === 0 ? 500 : 200 }))
    const down = await receiver(() => ({ status: 503 }))
    const producer = queue()
    const hub = await worker({ webhooks: [{ url: down.url }, { url: flaky.url }], sharedSecret: 's3cret' })
    const results: string[] = []
    const attempts: string[] = []
    hub.on('delivered', (result) => results.push(result.urls.map((url) => url.status).join(',')))
    hub.on('attempt', (notice) =>
      attempts.push(
        `${notice.url === `${flaky.url}/` ? 'flaky' : 'down'} ${notice.attempts} ${notice.accepted} ${notice.status}`,
      ),
    )
    await producer.enqueue({ type: 'identify', userId: 'u1' })
    await expect.poll(() => results, { timeout: 10_000 }).toEqual(['superseded,delivered'])
    // The second round ends at flaky's 200: down's second attempt, if it had not answered yet, is
    // aborted and not reported.
    expect(attempts.sort().filter((attempt) => attempt !== 'down 2 false 503')).toEqual([
      'down 1 false 503',
      'flaky 1 false 500',
      'flaky 2 true 200',
    ])
    expect(flaky.requests).toHaveLength(2)
    expect(down.requests.length).toBeGreaterThanOrEqual(1)
    expect(down.requests.length).toBeLessThanOrEqual(2)
    expect(flaky.requests[0]?.body).toBe(flaky.requests[1]?.body)
    expect(flaky.requests[0]?.headers['x-signature']).toBe(flaky.requests[1]?.headers['x-signature'])
  })

  it('signs every round under Standard Webhooks afresh, under the event id, and fails an id the scheme cannot carry', async () => {
    const secret = generateStandardSecret()
    const flaky = await receiver((_request, index) => ({ status: index === 0 ? 500 : 200 }))
    const producer = queue()
    // Over a second between rounds, so that the two timestamps differ.
    const hub = await worker({ webhooks: [{ url: flaky.url }], standardSecret: secret, backoff: () => 1_100 })
    const failed: string[] = []
    hub.on('failed', (result) => failed.push(`${result.eventId} ${result.urls[0]?.lastError?.code}`))
    await producer.enqueue({ type: 'identify', userId: 'u1', messageId: 'evt-1' })
    await producer.enqueue({ type: 'identify', userId: 'u1', messageId: 'evt.2' })
    await expect.poll(() => flaky.requests.length, { timeout: 10_000 }).toBe(2)
    await expect.poll(() => failed, { timeout: 10_000 }).toEqual(['evt.2 ERR_CALLBACK'])
    const [first, second] = flaky.requests as [ReceivedRequest, ReceivedRequest]
    expect([first.headers['webhook-id'], second.headers['webhook-id']]).toEqual(['evt-1', 'evt-1'])
    expect(Number(second.headers['webhook-timestamp'])).toBeGreaterThan(Number(first.headers['webhook-timestamp']))
    for (const request of [first, second]) {
      const headers = Object.fromEntries(Object.entries(request.headers).map(([key, value]) => [key, String(value)]))
      expect(new StandardWebhook(secret).verify(request.body, headers)).toMatchObject({ userId: 'u1' })
    }
  })

  it('counts the backlog with the age of the oldest waiting event', async () => {
    const producer = queue()
    expect(await producer.counts()).toEqual({
      waiting: 0,
      parked: 0,
      delayed: 0,
      retrying: 0,
      heldByBreaker: 0,
      heldForSlots: 0,
      active: 0,
      failed: 0,
      lateMs: undefined,
      oldestWaitingMs: undefined,
      urls: [],
    })
    const before = Date.now()
    await producer.enqueue({ type: 'identify', userId: 'u1', messageId: 'first' })
    await producer.enqueue({ type: 'identify', userId: 'u2', messageId: 'second' })
    await new Promise((resolve) => setTimeout(resolve, 50))
    const counts = await producer.counts()
    expect(counts).toMatchObject({ waiting: 2, delayed: 0, active: 0, failed: 0 })
    // The oldest, not the newest: at least as old as the wait since the first enqueue began.
    expect(counts.oldestWaitingMs).toBeGreaterThanOrEqual(50)
    expect(counts.oldestWaitingMs).toBeLessThanOrEqual(Date.now() - before)
    // Never retried: late since it was enqueued.
    expect(counts.lateMs).toBeGreaterThanOrEqual(0)
  })

  it('keeps at most deadLetters.maxCount dead letters, and purges the rest on demand', async () => {
    const sink = await receiver(() => ({ status: 410 }))
    const producer = queue({ deadLetters: { maxCount: 2 } })
    await worker({ webhooks: [{ url: sink.url }] })
    for (let index = 0; index < 5; index++)
      await producer.enqueue({ type: 'identify', userId: `u${index}`, messageId: `gone-${index}` })
    await expect.poll(() => sink.requests.length, { timeout: 10_000 }).toBe(5)
    await expect.poll(async () => (await producer.counts()).failed, { timeout: 10_000 }).toBe(2)
    // The two that failed last are kept: which two depends on the order ten worker slots failed them in.
    expect((await producer.deadLetters()).every((letter) => letter.eventId.startsWith('gone-'))).toBe(true)
    expect(await producer.purgeDeadLetters()).toBe(2)
    expect((await producer.counts()).failed).toBe(0)
  })

  it('keeps a week of dead letters by default: a worker trims older ones when a later event fails', async () => {
    const sink = await receiver(() => ({ status: 410 }))
    const producer = queue()
    await worker({ webhooks: [{ url: sink.url }] })
    const raw = new Redis({ host: '127.0.0.1', port: redis.port })
    open.push({ close: async () => raw.disconnect() })
    await producer.enqueue({ type: 'identify', userId: 'u1', messageId: 'aged' })
    await expect.poll(async () => (await producer.counts()).failed, { timeout: 10_000 }).toBe(1)
    // The job carries no retention of its own: the worker applies the default.
    const failedSet = `bull:${name}:failed`
    expect(await raw.hget(`bull:${name}:evt-aged`, 'opts')).not.toContain('removeOnFail')
    // As if it had failed eight days ago.
    await raw.zadd(failedSet, String(Date.now() - 8 * 24 * 3_600_000), 'evt-aged')
    await producer.enqueue({ type: 'identify', userId: 'u2', messageId: 'recent' })
    await expect.poll(() => raw.zrange(failedSet, '0', '-1'), { timeout: 10_000 }).toEqual(['evt-recent'])
    expect(await raw.exists(`bull:${name}:evt-aged`)).toBe(0)
  })

  it('keeps the cause of a network failure in the dead letter, bounded and without control characters', async () => {
    const closed = `http://127.0.0.1:${await freePort()}/`
    const producer = queue()
    await worker({ webhooks: [{ url: closed }], retryWindowMs: 200, backoff: () => 50 })
    await producer.enqueue({ type: 'identify', userId: 'u1', messageId: 'refused' })
    await expect.poll(async () => (await producer.counts()).failed, { timeout: 10_000 }).toBe(1)
    const [letter] = await producer.deadLetters()
    expect(letter?.reason).toMatch(new RegExp(`${closed}: ERR_NETWORK \\(.*ECONNREFUSED 127\\.0\\.0\\.1:\\d+.*\\)`))
    // biome-ignore lint/suspicious/noControlCharactersInRegex: none may be there.
    expect(letter?.reason).not.toMatch(/[\u0000-\u001f]/)
  })

  it('keeps a 4xx failure and an exhausted window as dead letters with each URL’s last error, and re-drives them', async () => {
    let accept = false
    const sink = await receiver((request) => ({
      status: accept ? 200 : JSON.parse(request.body).userId === 'gone' ? 410 : 500,
    }))
    const producer = queue()
    await worker({ webhooks: [{ url: sink.url }], retryWindowMs: 300 })
    await producer.enqueue({ type: 'identify', userId: 'gone', messageId: 'a' })
    await producer.enqueue({ type: 'identify', userId: 'down', messageId: 'b' })
    await expect.poll(async () => (await producer.counts()).failed, { timeout: 10_000 }).toBe(2)
    const letters = Object.fromEntries((await producer.deadLetters()).map((letter) => [letter.eventId, letter]))
    expect(letters['a']?.urls).toMatchObject([
      { url: `${sink.url}/`, status: 'failed', attempts: 1, failure: { code: 'ERR_HTTP_STATUS', status: 410 } },
    ])
    expect(letters['b']?.urls[0]?.attempts).toBeGreaterThan(1)
    expect(letters['b']?.urls[0]?.failure).toEqual({ code: 'ERR_HTTP_STATUS', status: 500 })
    expect(letters['b']?.reason).toMatch(/not delivered/)

    accept = true
    expect(await producer.redrive('a')).toBe(true)
    expect(await producer.redrive('b')).toBe(true)
    expect(await producer.redrive('unknown')).toBe(false)
    await expect.poll(async () => (await producer.counts()).failed, { timeout: 10_000 }).toBe(0)
    expect(await producer.deadLetters()).toEqual([])
  })

  it.each(['redrive', 'Job.retry'] as const)(
    "re-sends a mode 'each' dead letter only to the URLs that did not take it (%s)",
    async (how) => {
      let accept = false
      const took = await receiver(() => ({ status: 200 }))
      const refused = await receiver(() => ({ status: accept ? 200 : 410 }))
      const producer = queue()
      await worker({ webhooks: [{ url: took.url }, { url: refused.url }], mode: 'each' })
      await producer.enqueue({ type: 'identify', userId: 'u1', messageId: 'both' })
      await expect.poll(async () => (await producer.counts()).failed, { timeout: 10_000 }).toBe(1)
      accept = true
      if (how === 'redrive') expect(await producer.redrive('both')).toBe(true)
      else {
        const dashboard = new Queue(name, { connection: { host: '127.0.0.1', port: redis.port } })
        try {
          await (await dashboard.getJob('evt-both'))?.retry('failed')
        } finally {
          await dashboard.close()
        }
      }
      await expect.poll(() => refused.requests.length, { timeout: 10_000 }).toBe(2)
      await expect.poll(async () => (await producer.counts()).failed, { timeout: 10_000 }).toBe(0)
      // The URL that answered 200 the first time got the event once.
      expect(took.requests).toHaveLength(1)
    },
  )

  it("delivers a dead letter run again from outside, as a dashboard's Retry does (BullMQ's Job.retry)", async () => {
    let accept = false
    const sink = await receiver(() => ({ status: accept ? 200 : 410 }))
    const producer = queue()
    const delivered: string[] = []
    ;(await worker({ webhooks: [{ url: sink.url }] })).on('delivered', (result) => delivered.push(result.eventId))
    await producer.enqueue({ type: 'identify', userId: 'u1', messageId: 'retried' })
    await expect.poll(async () => (await producer.counts()).failed, { timeout: 10_000 }).toBe(1)
    accept = true
    const dashboard = new Queue(name, { connection: { host: '127.0.0.1', port: redis.port } })
    try {
      await (await dashboard.getJob('evt-retried'))?.retry('failed')
    } finally {
      await dashboard.close()
    }
    await expect.poll(() => delivered, { timeout: 10_000 }).toEqual(['retried'])
    expect(sink.requests).toHaveLength(2)
  })
})

describe.runIf(withRedis)('a Redis restart', () => {
  it('loses nothing that was acknowledged (append-only file, fsync always)', async () => {
    const persistent = await startRedis({ persistent: true })
    try {
      const sink = await startSink()
      open.push(sink)
      const connection = { host: '127.0.0.1', port: persistent.port }
      const producer = new WebhookQueue({ connection, name: 'restart' })
      for (let index = 0; index < 500; index++)
        await producer.enqueue({ type: 'identify', userId: `u${index}`, messageId: `m${index}` })
      await producer.close()
      await persistent.stop()
      await persistent.restart()
      const hub = new WebhookWorker(
        { webhooks: [{ url: sink.url }] },
        { connection: { ...connection, maxRetriesPerRequest: null }, name: 'restart' },
      )
      open.push(hub)
      await expect
        .poll(() => new Set(sink.requests.map((request) => request.headers['webhook-id'])).size, { timeout: 20_000 })
        .toBe(500)
    } finally {
      await Promise.all(open.splice(0).map((item) => item.close()))
      await persistent.dispose()
    }
  })
})

describe.runIf(withRedis)('a worker beside a black-holed URL', () => {
  it("in mode 'any' frees its slot at the first 2xx: the healthy URL gets every event while the black hole's attempts would still be out", async () => {
    const hole = await startChaosSink(() => ({ kind: 'hang' }))
    open.push(hole)
    const good = await receiver()
    const producer = queue()
    const delivered: string[] = []
    // Five slots and 50 events: waiting for the black hole (15 s an attempt) would take minutes.
    const created = new WebhookWorker(
      { webhooks: [{ url: hole.url }, { url: good.url }], timeoutMs: 15_000 },
      { connection: { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null }, name, concurrency: 5 },
    )
    open.push(created)
    created.on('delivered', (result) => delivered.push(result.eventId))
    await created.ready()
    for (let index = 0; index < 50; index++)
      await producer.enqueue({ type: 'identify', userId: `u${index}`, messageId: `any-${index}` })
    await expect.poll(() => delivered.length, { timeout: 10_000 }).toBe(50)
    expect(good.requests).toHaveLength(50)
    expect((await producer.counts()).failed).toBe(0)
  })
})

describe.runIf(withRedis)('a worker closed at once', () => {
  it('before it is ready, reports nothing: a start cut short by close() is no error', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    try {
      for (const settings of [{ webhooks: [{ url: 'http://127.0.0.1:9/' }] }, {}]) {
        const worker = new WebhookWorker(settings, {
          connection: { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null },
          name: 'closed-at-once',
        })
        await worker.close()
        // ready() settles after the start's own failure handler has run: nothing is left to report.
        await worker.ready().catch(() => undefined)
      }
      expect(logged).not.toHaveBeenCalled()
    } finally {
      logged.mockRestore()
    }
  })
})

describe.runIf(withRedis)('a queue that cannot store', () => {
  it('refuses enqueue() at once after close(), with ERR_CLOSED, not a timeout that blames Redis', async () => {
    const producer = new WebhookQueue({ connection: { host: '127.0.0.1', port: redis.port }, name: 'closed-queue' })
    await producer.ready()
    await producer.close()
    await expect(producer.enqueue({ type: 'identify', userId: 'u1', messageId: 'late' })).rejects.toMatchObject({
      name: 'ClosedError',
      code: 'ERR_CLOSED',
    })
    await expect(producer.enqueueBulk([{ type: 'identify', userId: 'u1' }])).rejects.toMatchObject({
      code: 'ERR_CLOSED',
    })
  })
})
