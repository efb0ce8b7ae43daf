// The JSON a BullMQ job stores is a format: Redis keeps it across deploys, so a worker of the next
// version reads what a producer or worker of this one wrote. These tests pin it to the byte, as
// Redis holds it, so that a refactor cannot change what existing data means without failing here.
import { afterEach, describe, expect, it } from 'vitest'
import { WebhookQueue, WebhookWorker } from '../../src/webhook/bullmq/index.js'
import { jobDataProblem } from '../../src/webhook/bullmq/job-data.js'
import type { DeliveryResult } from '../../src/webhook/delivery/result.js'
import { freePort } from '../helpers/ports.js'
import { redisForFile } from '../helpers/redis-suite.js'
import { startSink, type Responder, type Sink } from '../helpers/sink.js'

const event = {
  type: 'track',
  userId: 'u1',
  event: 'Paid',
  messageId: 'order-1042',
  timestamp: '2024-01-01T00:00:00.000Z',
  properties: { total: 42 },
} as const

/** What `enqueue(event)` stores: the event id and the webhook body, serialized once by the producer. */
const FRESH = String.raw`{"eventId":"order-1042","body":"{\"version\":1,\"type\":\"track\",\"userId\":\"u1\",\"timestamp\":\"2024-01-01T00:00:00.000Z\",\"context\":{},\"event\":\"Paid\",\"properties\":{\"total\":42}}"}`

/** What `enqueue(event, { destination: 'acme' })` stores: the same, and the destination's id. */
const FOR_ACME = `${FRESH.slice(0, -1)},"destination":"acme"}`

/**
 * What a worker stores after a first round in mode `'each'` that is to be retried: the fresh job's
 * fields, then the state, each URL with its own entry in the order configured. A field that is
 * `undefined` (no status after a network error, no Retry-After, no failure once delivered) is left out.
 */
/**
 * Each pending URL keeps its own next attempt (`dueAt`, epoch ms): URLs retry on their own
 * timelines. Without `dueAt`, a state as workers before per-URL timelines wrote it: due at once.
 */
function afterOneRound(
  deadline: number,
  urls: { slow: string; accepting: string; closed: string },
  dueAt?: { slow: number; closed: number },
): string {
  const slowDue = dueAt === undefined ? '' : `"dueAt":${dueAt.slow},`
  const closedDue = dueAt === undefined ? '' : `"dueAt":${dueAt.closed},`
  return `${FRESH.slice(0, -1)},"state":{"eventId":"order-1042","deadline":${deadline},"rounds":1,"targets":[{"url":"${urls.slow}","status":"pending","attempts":1,"lastStatus":503,"retryAfterMs":7000,${slowDue}"failure":{"code":"ERR_HTTP_STATUS","status":503}},{"url":"${urls.accepting}","status":"delivered","attempts":1,"lastStatus":200},{"url":"${urls.closed}","status":"pending","attempts":1,${closedDue}"failure":{"code":"ERR_NETWORK"}}]}}`
}

describe('the job data format, without Redis', () => {
  it('is an eventwire job as the worker checks it, fresh and after a round', () => {
    expect(jobDataProblem('evt-order-1042', JSON.parse(FRESH))).toBeUndefined()
    const stored = afterOneRound(
      1_700_000_000_000,
      { slow: 'http://a.test/in?x=1', accepting: 'http://b.test/', closed: 'http://c.test/' },
      { slow: 1_699_996_460_000, closed: 1_699_996_460_000 },
    )
    expect(jobDataProblem('evt-order-1042', JSON.parse(stored))).toBeUndefined()
    expect(jobDataProblem('evt-order-1042', { ...JSON.parse(FRESH), dedupWindowMs: 0 })).toBeUndefined()
  })

  it("names a registry's destination after the body, under the job id dst-{destination}/{escaped eventId}", () => {
    expect(jobDataProblem('dst-acme/order-1042', JSON.parse(FOR_ACME))).toBeUndefined()
    expect(jobDataProblem('evt-order-1042', JSON.parse(FOR_ACME))).toBe(
      'its `eventId` and `destination` do not match its job id "evt-order-1042"',
    )
    expect(jobDataProblem('dst-acme/a%2Fb', { ...JSON.parse(FOR_ACME), eventId: 'a/b' })).toBeUndefined()
    for (const destination of ['', 'a/b', 'a:b', 42, null])
      expect(jobDataProblem('dst-acme/order-1042', { ...JSON.parse(FOR_ACME), destination })).toBe(
        'its `destination` is not a destination id',
      )
  })

  it('is not an eventwire job with a window that is not a count of ms', () => {
    for (const dedupWindowMs of [-1, 1.5, '60000', null])
      expect(jobDataProblem('evt-order-1042', { ...JSON.parse(FRESH), dedupWindowMs })).toBe(
        'its `dedupWindowMs` is not a count of ms',
      )
  })
})

const redis = redisForFile()
const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()))
})

async function receiver(respond: Responder): Promise<Sink> {
  const sink = await startSink(respond)
  open.push(sink)
  return sink
}

let queues = 0
function queue(): { producer: WebhookQueue; name: string; stored: () => Promise<Record<string, string>> } {
  const name = `job-format-${++queues}`
  const producer = new WebhookQueue({ connection: { host: '127.0.0.1', port: redis.server.port }, name })
  open.push(producer)
  // BullMQ keeps a job as a hash at `{prefix}:{name}:{jobId}`.
  return { producer, name, stored: () => redis.raw.hgetall(`bull:${name}:evt-order-1042`) }
}

describe.runIf(redis.available)('the job data format in Redis', () => {
  it('stores a fresh event as its id and body, under the job id evt-{eventId}', async () => {
    const { producer, stored } = queue()
    await producer.enqueue(event)
    const job = await stored()
    expect(job['name']).toBe('deliver')
    expect(job['data']).toBe(FRESH)
  })

  it("stores an event for a registry's destination with its id, under dst-{destination}/{eventId}; the registry keeps the destination's settings as given, with its version and time", async () => {
    const { producer, name } = queue()
    const acme = await producer.destinations.set({
      id: 'acme',
      webhooks: [{ url: 'https://hooks.acme.example/in', headers: { 'X-Team': 'data' } }],
      sharedSecret: 's3cret',
    })
    await producer.enqueue(event, { destination: 'acme' })
    expect(await redis.raw.hget(`bull:${name}:dst-acme/order-1042`, 'data')).toBe(FOR_ACME)
    expect(await redis.raw.hget(`bull:${name}:destinations`, 'acme')).toBe(
      `{"id":"acme","webhooks":[{"url":"https://hooks.acme.example/in","headers":{"X-Team":"data"}}],"sharedSecret":"s3cret","mode":"any","enabled":true,"version":${acme.version},"updatedAt":${acme.updatedAt}}`,
    )
    expect(await redis.raw.get(`bull:${name}:destinations:version`)).toBe(String(acme.version))
    expect(await redis.raw.zscore(`bull:${name}:destinations:changes`, 'acme')).toBe(String(acme.version))
  })

  it("stores a producer's own window and dead-letter retention in the job, and keeps the window through a round", async () => {
    const name = `job-format-${++queues}`
    const producer = new WebhookQueue({
      connection: { host: '127.0.0.1', port: redis.server.port },
      name,
      dedupWindowMs: 60_000,
      deadLetters: { maxCount: 10 },
    })
    open.push(producer)
    await producer.enqueue(event)
    const key = `bull:${name}:evt-order-1042`
    const job = await redis.raw.hgetall(key)
    expect(job['data']).toBe(`${FRESH.slice(0, -1)},"dedupWindowMs":60000}`)
    expect(job['opts']).toBe(
      '{"jobId":"evt-order-1042","removeOnComplete":true,"removeOnFail":{"age":604800,"count":10},"attempts":0}',
    )
    const slow = await receiver(() => ({ status: 503 }))
    const worker = new WebhookWorker(
      { webhooks: [{ url: slow.url }], backoff: () => 60_000 },
      { connection: { host: '127.0.0.1', port: redis.server.port, maxRetriesPerRequest: null }, name },
    )
    open.push(worker)
    await expect.poll(async () => (await producer.counts()).delayed, { timeout: 10_000 }).toBe(1)
    const data = JSON.parse((await redis.raw.hget(key, 'data')) ?? '{}') as Record<string, unknown>
    expect(Object.keys(data)).toEqual(['eventId', 'body', 'dedupWindowMs', 'state'])
    expect(data['dedupWindowMs']).toBe(60_000)
  })

  it('stores the state of every URL after a round that is to be retried', async () => {
    const slow = await receiver(() => ({ status: 503, headers: { 'retry-after': '7' } }))
    const accepting = await receiver(() => ({ status: 200 }))
    const closed = `http://127.0.0.1:${await freePort()}/`
    const { producer, name, stored } = queue()
    const before = Date.now()
    await producer.enqueue(event)
    const worker = new WebhookWorker(
      {
        webhooks: [{ url: `${slow.url}/in?x=1` }, { url: accepting.url }, { url: closed }],
        mode: 'each',
        retryWindowMs: 3_600_000,
        // Long enough that the job is read while it waits as a delayed job.
        backoff: () => 60_000,
      },
      { connection: { host: '127.0.0.1', port: redis.server.port, maxRetriesPerRequest: null }, name },
    )
    open.push(worker)
    await expect.poll(async () => (await producer.counts()).delayed, { timeout: 10_000 }).toBe(1)
    const after = Date.now()

    const data = (await stored())['data'] ?? ''
    // The deadline is the first round's clock plus the window: known only within the test's bounds.
    const deadline = (JSON.parse(data) as { state: { deadline: number } }).state.deadline
    expect(deadline).toBeGreaterThanOrEqual(before + 3_600_000)
    expect(deadline).toBeLessThanOrEqual(after + 3_600_000)
    // Each URL's next attempt is its own backoff (60 s, longer than the slow URL's Retry-After) after its answer.
    const [slowDue, , closedDue] = (JSON.parse(data) as { state: { targets: Array<{ dueAt?: number }> } }).state.targets
    for (const due of [slowDue?.dueAt, closedDue?.dueAt]) {
      expect(due).toBeGreaterThanOrEqual(before + 60_000)
      expect(due).toBeLessThanOrEqual(after + 60_000)
    }
    expect(data).toBe(
      afterOneRound(
        deadline,
        { slow: `${slow.url}/in?x=1`, accepting: `${accepting.url}/`, closed },
        { slow: slowDue?.dueAt ?? 0, closed: closedDue?.dueAt ?? 0 },
      ),
    )
  })

  it('reads stored state as it was written: only pending URLs are sent to, counting on from the stored numbers', async () => {
    const sinks = [await receiver(() => ({ status: 200 })), await receiver(() => ({ status: 200 }))]
    const recovered = await receiver(() => ({ status: 200 }))
    const [slow, accepting] = sinks.map((sink) => `${sink.url}/`) as [string, string]
    const { producer, name } = queue()
    await producer.enqueue(event)
    // As a worker of an earlier version left it, in the format pinned above.
    const urls = { slow, accepting, closed: `${recovered.url}/` }
    await redis.raw.hset(`bull:${name}:evt-order-1042`, 'data', afterOneRound(Date.now() + 3_600_000, urls))
    const worker = new WebhookWorker(
      { webhooks: [{ url: slow }, { url: accepting }, { url: urls.closed }], mode: 'each' },
      { connection: { host: '127.0.0.1', port: redis.server.port, maxRetriesPerRequest: null }, name },
    )
    open.push(worker)
    const delivered = new Promise((resolve) => worker.once('delivered', resolve))
    expect(await delivered).toMatchObject({
      eventId: 'order-1042',
      attempts: 2,
      urls: [
        { url: slow, status: 'delivered', attempts: 2, lastStatus: 200 },
        { url: accepting, status: 'delivered', attempts: 1, lastStatus: 200 },
        { url: urls.closed, status: 'delivered', attempts: 2, lastStatus: 200 },
      ],
    })
    expect([sinks[0]?.requests.length, sinks[1]?.requests.length, recovered.requests.length]).toEqual([1, 0, 1])
  })

  /** A worker of queue `name` on this suite's Redis, closed after the test. */
  function workerOf(name: string, settings: ConstructorParameters<typeof WebhookWorker>[0]) {
    const worker = new WebhookWorker(settings, {
      connection: { host: '127.0.0.1', port: redis.server.port, maxRetriesPerRequest: null },
      name,
    })
    open.push(worker)
    return worker
  }

  /**
   * Receivers answering 200 (three, and `extra` more), and a fresh queue whose job holds the state
   * pinned above for the first three: slow 503, accepting delivered, closed network error.
   */
  async function pinnedState(extra = 0) {
    const sinks = await Promise.all(Array.from({ length: 3 + extra }, () => receiver(() => ({ status: 200 }))))
    const [slow, accepting, closed] = sinks as [Sink, Sink, Sink]
    const urls = { slow: `${slow.url}/`, accepting: `${accepting.url}/`, closed: `${closed.url}/` }
    const { producer, name } = queue()
    await producer.enqueue(event)
    await redis.raw.hset(`bull:${name}:evt-order-1042`, 'data', afterOneRound(Date.now() + 3_600_000, urls))
    return { sinks, urls, name }
  }

  it('matches stored state to URLs by URL: a reordered list sends only to the pending URLs, counting on', async () => {
    const { sinks, urls, name } = await pinnedState()
    const [slow, accepting, closed] = sinks as [Sink, Sink, Sink]
    const worker = workerOf(name, {
      // Read by position, `accepting` would take slow's pending entry (a duplicate) and `closed`
      // accepting's delivered one (never sent to).
      webhooks: [{ url: urls.accepting }, { url: urls.closed }, { url: urls.slow }],
      mode: 'each',
    })
    const delivered = new Promise((resolve) => worker.once('delivered', resolve))
    expect(await delivered).toMatchObject({
      urls: [
        { url: urls.accepting, status: 'delivered', attempts: 1, lastStatus: 200 },
        { url: urls.closed, status: 'delivered', attempts: 2, lastStatus: 200 },
        { url: urls.slow, status: 'delivered', attempts: 2, lastStatus: 200 },
      ],
    })
    expect([slow.requests.length, accepting.requests.length, closed.requests.length]).toEqual([1, 0, 1])
  })

  it('starts a URL added to the list fresh, and ends a removed one as superseded, never sending to it', async () => {
    const { sinks, urls, name } = await pinnedState(1)
    const [slow, accepting, closed, added] = sinks as [Sink, Sink, Sink, Sink]
    // `slow` was removed, `added` is new.
    const worker = workerOf(name, {
      webhooks: [{ url: urls.accepting }, { url: `${added.url}/` }, { url: urls.closed }],
      mode: 'each',
    })
    const delivered = new Promise((resolve) => worker.once('delivered', resolve))
    expect(await delivered).toMatchObject({
      status: 'delivered',
      urls: [
        { url: urls.accepting, status: 'delivered', attempts: 1 },
        { url: `${added.url}/`, status: 'delivered', attempts: 1, lastStatus: 200 },
        { url: urls.closed, status: 'delivered', attempts: 2 },
        { url: urls.slow, status: 'superseded', attempts: 1, lastStatus: 503 },
      ],
    })
    expect([slow.requests.length, accepting.requests.length, closed.requests.length, added.requests.length]).toEqual([
      0, 0, 1, 1,
    ])
  })

  it('with workers of two versions of the list at once ([A, B] and [B, A]), each URL gets each event once it accepts', async () => {
    const events = 20
    const a = await receiver(() => ({ status: 200 }))
    // B refuses each event's first request: its retry may be taken by either worker.
    const seenByB = new Set<string>()
    const b = await receiver((request) => {
      const id = String(request.headers['webhook-id'])
      if (seenByB.has(id)) return { status: 200 }
      seenByB.add(id)
      return { status: 503 }
    })
    const { producer, name } = queue()
    // No breaker: twenty first refusals in a row would open it, and this test is about URL identity.
    const settings = { mode: 'each' as const, backoff: () => 50, breaker: false as const }
    const delivered: DeliveryResult[] = []
    for (const webhooks of [
      [{ url: a.url }, { url: b.url }],
      [{ url: b.url }, { url: a.url }],
    ]) {
      workerOf(name, { ...settings, webhooks }).on('delivered', (result) => delivered.push(result))
    }
    for (let index = 0; index < events; index++) await producer.enqueue({ ...event, messageId: `order-${index}` })
    await expect.poll(() => delivered.length, { timeout: 20_000 }).toBe(events)
    const perEvent = (sink: Sink) =>
      Object.values(
        sink.requests.reduce<Record<string, number>>((counts, request) => {
          const id = String(request.headers['webhook-id'])
          counts[id] = (counts[id] ?? 0) + 1
          return counts
        }, {}),
      )
    expect(perEvent(a)).toEqual(Array(events).fill(1))
    expect(perEvent(b)).toEqual(Array(events).fill(2))
    for (const result of delivered) {
      const byUrl = Object.fromEntries(result.urls.map((url) => [url.url, url]))
      expect(byUrl[`${a.url}/`]).toMatchObject({ status: 'delivered', attempts: 1 })
      expect(byUrl[`${b.url}/`]).toMatchObject({ status: 'delivered', attempts: 2 })
    }
  })

  it('sends to a URL that a worker without it left superseded, when a worker that lists it takes the event', async () => {
    const x = await receiver(() => ({ status: 200 }))
    const y = await receiver((_request, index) => ({ status: index < 2 ? 503 : 200 }))
    const z = await receiver((_request, index) => ({ status: index < 1 ? 503 : 200 }))
    const { producer, name } = queue()
    const settings = { mode: 'each' as const, backoff: () => 300, breaker: false as const }
    const pendingAgain = async (sinks: Sink[], requests: number[]) => {
      await expect.poll(() => sinks.map((sink) => sink.requests.length), { timeout: 10_000 }).toEqual(requests)
      await expect.poll(async () => (await producer.counts()).delayed, { timeout: 10_000 }).toBe(1)
    }
    // The new list [Y, Z] first: both refuse once.
    const newer = workerOf(name, { ...settings, webhooks: [{ url: y.url }, { url: z.url }] })
    await producer.enqueue(event)
    await pendingAgain([y, z], [1, 1])
    await newer.close()
    // The old list [X, Y]: X accepts, Y refuses again, Z (not in its list) is left superseded.
    const older = workerOf(name, { ...settings, webhooks: [{ url: x.url }, { url: y.url }] })
    await pendingAgain([x, y, z], [1, 2, 1])
    await older.close()
    // The new list again: Z is pending here, and the event is delivered only once Z accepted.
    const again = workerOf(name, { ...settings, webhooks: [{ url: y.url }, { url: z.url }] })
    const delivered = new Promise<DeliveryResult>((resolve) => again.once('delivered', resolve))
    const result = await delivered
    expect(z.requests).toHaveLength(2)
    expect(result.urls.map((url) => [url.url, url.status])).toEqual([
      [`${y.url}/`, 'delivered'],
      [`${z.url}/`, 'delivered'],
      [`${x.url}/`, 'delivered'],
    ])
  })
})
