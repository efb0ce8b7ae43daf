// What WebhookQueue.counts() tells apart, across every worker: events waiting for a worker, waiting
// for a retry, and held back by a URL (its breaker open, its slots taken), per URL; and how late
// the work is, counted from when an event became due rather than from its enqueue.
import { createHash } from 'node:crypto'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { HeldJobs } from '../../src/webhook/bullmq/held-jobs.js'
import { WebhookQueue, WebhookWorker } from '../../src/webhook/bullmq/index.js'
import type { Endpoint } from '../../src/webhook/network/endpoint.js'
import type { DeliveryState } from '../../src/webhook/delivery/state.js'
import type { WebhookResponse, WebhookSettings, WebhookTransport } from '../../src/webhook/index.js'
import { redisForFile } from '../helpers/redis-suite.js'

const redis = redisForFile()
const open: Array<{ close(): Promise<void> } | { quit(): Promise<unknown> }> = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => ('close' in item ? item.close() : item.quit())))
})

const DEAD = 'https://dead.example.com/in'
const FINE = 'https://fine.example.com/in'
const answer = (status: number): WebhookResponse => ({ ok: true, status, retryAfter: null })
/** Redis's clock, in ms: what stored due times are on. */
async function redisNow(client: Redis): Promise<number> {
  const [seconds, micros] = await client.time()
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
}

const event = (index: number) => ({ type: 'track' as const, userId: 'u1', event: 'E', messageId: `e${index}` })

describe.runIf(redis.available)('WebhookQueue.counts()', () => {
  const connection = () => ({ host: '127.0.0.1', port: redis.server.port, maxRetriesPerRequest: null })

  it('tells retries from events held by an open breaker, per URL, across two workers, until the breaker closes', {
    timeout: 60_000,
  }, async () => {
    let up = false
    const transport: WebhookTransport = {
      send: async (request) => (request.url === DEAD && !up ? answer(503) : answer(204)),
    }
    const settings = (url: string): WebhookSettings => ({
      webhooks: [{ url }],
      transport,
      // Failed events wait two minutes: any event still delayed sooner than that is held, not retried.
      backoff: () => 120_000,
      breaker: { failures: 2, coolDownMs: 4_000 },
    })
    const name = 'counts-held'
    const queue = new WebhookQueue({ connection: connection(), name })
    // Two workers on the dead URL; the other URL's events go through a queue of their own.
    const workers = [0, 1].map(
      () => new WebhookWorker(settings(DEAD), { connection: connection(), name, concurrency: 1 }),
    )
    open.push(...workers, queue)
    await Promise.all(workers.map((worker) => worker.ready()))
    await queue.enqueueBulk(Array.from({ length: 12 }, (_, index) => event(index)))

    let counts = await queue.counts()
    await vi.waitFor(
      async () => {
        counts = await queue.counts()
        expect(counts.waiting + counts.active).toBe(0)
      },
      { timeout: 20_000, interval: 50 },
    )
    expect(counts.delayed).toBe(12)
    expect(counts.retrying).toBeGreaterThanOrEqual(2)
    expect(counts.heldByBreaker).toBeGreaterThanOrEqual(1)
    expect(counts.retrying + counts.heldByBreaker + counts.heldForSlots).toBe(12)
    expect(counts.heldForSlots).toBe(0)
    expect(counts.urls).toEqual([{ url: DEAD, heldByBreaker: counts.heldByBreaker, heldForSlots: 0 }])
    // Nothing is due: the held ones wait for the cool-down, the others for their retry.
    expect(counts.lateMs).toBeUndefined()

    // The receiver is back: the probe closes the breaker and the held events go; the retries wait.
    up = true
    await vi.waitFor(
      async () => {
        counts = await queue.counts()
        expect(counts.heldByBreaker).toBe(0)
        expect(counts.waiting + counts.active).toBe(0)
      },
      { timeout: 20_000, interval: 100 },
    )
    expect(counts.urls).toEqual([])
    expect(counts.retrying).toBe(counts.delayed)
  })

  it('tells events held for a URL’s slots, beside a URL that takes every event at once', {
    timeout: 30_000,
  }, async () => {
    // The slow URL answers after 300 ms, one attempt at a time: the jobs beside it wait for its slot.
    const transport: WebhookTransport = {
      send: async (request) => {
        if (request.url === DEAD) await new Promise((resolve) => setTimeout(resolve, 300))
        return answer(204)
      },
    }
    const name = 'counts-slots'
    const queue = new WebhookQueue({ connection: connection(), name })
    const worker = new WebhookWorker(
      { webhooks: [{ url: DEAD }, { url: FINE }], transport, mode: 'each', maxConcurrencyPerUrl: 1 },
      { connection: connection(), name, concurrency: 20 },
    )
    open.push(worker, queue)
    await worker.ready()
    await queue.enqueueBulk(Array.from({ length: 20 }, (_, index) => event(index)))
    let seen = { heldForSlots: 0, url: undefined as unknown }
    await vi.waitFor(
      async () => {
        const counts = await queue.counts()
        if (counts.heldForSlots > 0) seen = { heldForSlots: counts.heldForSlots, url: counts.urls }
        expect(seen.heldForSlots).toBeGreaterThan(0)
      },
      { timeout: 10_000, interval: 20 },
    )
    expect(seen.url).toEqual([expect.objectContaining({ url: DEAD, heldByBreaker: 0 })])
  })

  it('counts how late the next event is from when it became due, not from its enqueue', async () => {
    const name = 'counts-late'
    const queue = new WebhookQueue({ connection: connection(), name })
    const raw = new Queue(name, { connection: connection() })
    open.push(queue, raw)
    const client = new Redis(redis.server.port)
    open.push(client)
    const now = await redisNow(client)
    // Enqueued a minute ago, its retry due five seconds ago: five seconds late, a minute old.
    const state = {
      eventId: 'e1',
      deadline: now + 3_600_000,
      rounds: 1,
      targets: [
        {
          url: FINE,
          status: 'pending',
          attempts: 1,
          lastStatus: 503,
          failure: { code: 'ERR_HTTP_STATUS', status: 503 },
          dueAt: now - 5_000,
        },
        {
          url: DEAD,
          status: 'pending',
          attempts: 1,
          lastStatus: 503,
          failure: { code: 'ERR_HTTP_STATUS', status: 503 },
          dueAt: now + 60_000,
        },
      ],
    }
    await raw.add('webhook', { eventId: 'e1', body: '{}', state }, { jobId: 'evt-e1', timestamp: now - 60_000 })
    const counts = await queue.counts()
    expect(counts.waiting).toBe(1)
    expect(counts.lateMs).toBeGreaterThanOrEqual(5_000)
    expect(counts.lateMs).toBeLessThan(15_000)
    expect(counts.oldestWaitingMs).toBeGreaterThanOrEqual(60_000)

    // A delayed event whose time came 20 s ago, that no worker has taken: later still.
    await raw.add(
      'webhook',
      { eventId: 'e2', body: '{}' },
      { jobId: 'evt-e2', timestamp: Date.now() - 30_000, delay: 10_000 },
    )
    const later = await queue.counts()
    expect(later.delayed).toBe(1)
    expect(later.lateMs).toBeGreaterThanOrEqual(20_000)
    expect(later.lateMs).toBeLessThan(30_000)
  })

  it('forgets a hold once it has ended, and a URL once it holds nothing', async () => {
    const client = new Redis(redis.server.port)
    open.push(client)
    const held = new HeldJobs('bull:counts-ended')
    const keys = { wait: 'bull:counts-ended:wait', delayed: 'bull:counts-ended:delayed', job: 'bull:counts-ended:' }
    const now = await redisNow(client)
    const stateHeld = (url: string, dueAt: number, reason: 'breaker' | 'slots'): DeliveryState<Endpoint> => ({
      eventId: 'e',
      deadline: now + 3_600_000,
      rounds: 1,
      targets: [
        {
          endpoint: { url } as Endpoint,
          status: 'pending',
          attempts: 0,
          lastStatus: undefined,
          failure: undefined,
          retryAfterMs: undefined,
          dueAt,
          held: reason,
        },
      ],
    })
    await held.record(client, 'j1', undefined, stateHeld(DEAD, now + 60_000, 'breaker'), now + 60_000)
    await held.record(client, 'j2', undefined, stateHeld(FINE, now - 1, 'slots'), now - 1)
    await held.record(client, 'j3', undefined, stateHeld(FINE, now + 60_000, 'slots'), now + 60_000)
    expect(await held.read(client, keys)).toMatchObject({ heldByBreaker: 1, heldForSlots: 1 })

    // j3 is run again and delivered: its hold is forgotten, and FINE with it.
    await held.record(
      client,
      'j3',
      {
        eventId: 'e',
        deadline: 0,
        rounds: 1,
        targets: [
          {
            url: FINE,
            status: 'pending',
            attempts: 0,
            lastStatus: undefined,
            retryAfterMs: undefined,
            failure: undefined,
            held: 'slots',
            dueAt: now,
          },
        ],
      },
      undefined,
      0,
    )
    const counts = await held.read(client, keys)
    expect(counts).toEqual({
      heldByBreaker: 1,
      heldForSlots: 0,
      lateMs: undefined,
      oldestEnqueuedAt: undefined,
      urls: [{ url: DEAD, heldByBreaker: 1, heldForSlots: 0 }],
    })
    expect(await client.hkeys('bull:counts-ended:held:urls')).toHaveLength(1)
    // A job held neither before nor after writes nothing.
    expect(held.record(client, 'j4', undefined, undefined, 0)).toBeUndefined()
  })
})

describe.runIf(redis.available)('HeldJobs', () => {
  type Target = DeliveryState<Endpoint>['targets'][number]
  const target = (url: string, fields: Partial<Target>): Target => ({
    endpoint: { url } as Endpoint,
    status: 'pending',
    attempts: 1,
    lastStatus: undefined,
    failure: undefined,
    retryAfterMs: undefined,
    ...fields,
  })
  const stateOf = (targets: Target[]): DeliveryState<Endpoint> => ({ eventId: 'e', deadline: 0, rounds: 1, targets })
  const keysOf = (name: string) => ({
    wait: `bull:${name}:wait`,
    delayed: `bull:${name}:delayed`,
    job: `bull:${name}:`,
  })
  const sha1 = (url: string) => createHash('sha1').update(url).digest('hex')

  async function setUp(): Promise<{ client: Redis; now: number }> {
    const client = new Redis(redis.server.port)
    open.push(client)
    return { client, now: await redisNow(client) }
  }

  it("keeps each queue's holds apart", async () => {
    const { client, now } = await setUp()
    const first = new HeldJobs('bull:held-a')
    await first.record(
      client,
      'j1',
      undefined,
      stateOf([target(DEAD, { held: 'breaker', dueAt: now + 60_000 })]),
      now + 60_000,
    )
    expect(await first.read(client, keysOf('held-a'))).toMatchObject({ heldByBreaker: 1 })
    expect(await new HeldJobs('bull:held-b').read(client, keysOf('held-b'))).toEqual({
      heldByBreaker: 0,
      heldForSlots: 0,
      lateMs: undefined,
      oldestEnqueuedAt: undefined,
      urls: [],
    })
  })

  it('writes nothing for retries, nor for a URL that failed at the window’s end still naming its breaker', async () => {
    const { client, now } = await setUp()
    const held = new HeldJobs('bull:held-none')
    const before = {
      eventId: 'e',
      deadline: 0,
      rounds: 1,
      targets: [
        {
          url: FINE,
          status: 'pending' as const,
          attempts: 1,
          lastStatus: 503,
          retryAfterMs: undefined,
          failure: undefined,
          dueAt: now,
        },
      ],
    }
    const after = stateOf([
      target(FINE, { dueAt: now + 1_000 }),
      target(DEAD, { status: 'failed', held: 'breaker', dueAt: now + 60_000 }),
    ])
    expect(held.record(client, 'j1', before, after, now + 1_000)).toBeUndefined()
  })

  it('holds a URL listed twice until the later of its holds ends', async () => {
    const { client, now } = await setUp()
    const held = new HeldJobs('bull:held-twice')
    const after = stateOf([
      target(DEAD, { held: 'breaker', dueAt: now + 10_000 }),
      target(DEAD, { held: 'breaker', dueAt: now + 50_000 }),
    ])
    await held.record(client, 'j1', undefined, after, now + 10_000)
    expect(Number(await client.zscore(`bull:held-twice:held:breaker:${sha1(DEAD)}`, 'j1'))).toBe(now + 50_000)
    expect(await client.pttl(`bull:held-twice:held:breaker:${sha1(DEAD)}`)).toBeGreaterThan(50_000)
  })

  it('counts a job as held by what it comes back for first, a breaker before slots, and each URL by its own', async () => {
    const { client, now } = await setUp()
    const held = new HeldJobs('bull:held-first')
    // Back in a second for a retry at FINE: retrying, though DEAD holds it for slots until later.
    await held.record(
      client,
      'retry-first',
      undefined,
      stateOf([target(FINE, { dueAt: now + 1_000 }), target(DEAD, { held: 'slots', dueAt: now + 30_000 })]),
      now + 1_000,
    )
    // Back in 20 s for DEAD's breaker and FINE's slots alike: held by the breaker.
    await held.record(
      client,
      'both-held',
      undefined,
      stateOf([
        target(DEAD, { held: 'breaker', dueAt: now + 20_000 }),
        target(FINE, { held: 'slots', dueAt: now + 20_000 }),
      ]),
      now + 20_000,
    )
    const counts = await held.read(client, keysOf('held-first'))
    expect({ ...counts, urls: [...counts.urls].sort((a, b) => a.url.localeCompare(b.url)) }).toEqual({
      heldByBreaker: 1,
      heldForSlots: 0,
      lateMs: undefined,
      oldestEnqueuedAt: undefined,
      urls: [
        { url: DEAD, heldByBreaker: 1, heldForSlots: 1 },
        { url: FINE, heldByBreaker: 0, heldForSlots: 1 },
      ],
    })
  })

  it('reads a waiting job due later (a worker whose clock runs fast took it early) as 0 ms late', async () => {
    const { client, now } = await setUp()
    const raw = new Queue('held-early', { connection: { host: '127.0.0.1', port: redis.server.port } })
    open.push(raw)
    const state = {
      eventId: 'e',
      deadline: now + 3_600_000,
      rounds: 1,
      targets: [{ url: FINE, status: 'pending', attempts: 1, dueAt: now + 60_000 }],
    }
    await raw.add('webhook', { eventId: 'e', body: '{}', state }, { jobId: 'evt-e' })
    expect((await new HeldJobs('bull:held-early').read(client, keysOf('held-early'))).lateMs).toBe(0)
  })
})
