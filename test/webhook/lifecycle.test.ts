import { afterEach, describe, expect, it } from 'vitest'
import { ClosedError, WebhookDestination, type DeliveryResult, type WebhookTransport } from '../../src/webhook/index.js'
import { createHttp1Transport } from '../../src/webhook/node-only.js'
import { MemoryRetryStore } from '../../src/webhook/delivery/retry-store.js'
import { RetryScheduler } from '../../src/webhook/delivery/scheduler.js'
import { startSink, type Sink } from '../helpers/sink.js'
import { WebhookDestinationBase } from '../../src/webhook/delivery/destination-base.js'
import { defaultPlatform as webPlatform } from '../../src/webhook/platform/web.js'

let sink: Sink | undefined
afterEach(async () => {
  await sink?.close()
  sink = undefined
})

const liveTimers = () => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length

describe('close()', () => {
  it('reports events waiting for a retry as failed (ERR_CLOSED), refuses new ones, and is idempotent', async () => {
    sink = await startSink(() => ({ status: 503 }))
    const destination = new WebhookDestination({ webhooks: [{ url: sink.url }], backoff: () => 60_000 })
    const pending = destination.deliver({ type: 'identify', userId: 'u1' })
    await expect.poll(() => destination.pendingRetries).toBe(1)
    const closing = destination.close()
    expect(destination.close()).toBe(closing)
    await closing
    const result = await pending
    expect(result).toMatchObject({ status: 'failed', urls: [{ status: 'failed', attempts: 1 }] })
    expect(result.urls[0]?.lastError?.code).toBe('ERR_CLOSED')
    expect(result.urls[0]?.lastError?.cause).toMatchObject({ code: 'ERR_HTTP_STATUS', status: 503 })
    await expect(destination.deliver({ type: 'identify', userId: 'u2' })).rejects.toBeInstanceOf(ClosedError)
  })

  it('waits for requests in flight before resolving', async () => {
    sink = await startSink(() => ({ status: 200, delayMs: 300 }))
    const destination = new WebhookDestination({ webhooks: [{ url: sink.url }] })
    const delivery = destination.deliver({ type: 'identify', userId: 'u1' })
    await expect.poll(() => sink?.requests.length).toBe(1)
    let delivered: DeliveryResult | undefined
    void delivery.then((result) => (delivered = result))
    await destination.close()
    expect(delivered?.status).toBe('delivered')
  })
})

describe('close() at its deadline', () => {
  it('ends what is still queued for a slot with ERR_CLOSED, unsent, and sends nothing after it resolves', async () => {
    const held: Array<(status: number) => void> = []
    const transport: WebhookTransport = {
      send: () =>
        new Promise((resolve) => {
          held.push((status) => resolve({ ok: true, status, retryAfter: null }))
        }),
    }
    const destination = new WebhookDestination({
      webhooks: [{ url: 'https://a.test/' }],
      transport,
      maxConcurrencyPerUrl: 1,
    })
    const [first, ...queued] = [1, 2, 3].map((index) => destination.deliver({ type: 'identify', userId: `u${index}` }))
    await expect.poll(() => held.length).toBe(1)
    await destination.close({ timeout: 50 })
    const ended = await Promise.all(queued)
    for (const result of ended) {
      expect(result.status).toBe('failed')
      expect(result.urls[0]).toMatchObject({ attempts: 0, lastError: { code: 'ERR_CLOSED' } })
    }
    // The request in flight ends on its own, and frees a slot that nothing takes.
    held[0]?.(200)
    expect((await first)?.status).toBe('delivered')
    expect(destination.backlog()[0]).toMatchObject({ queued: 0, inFlight: 0 })
    expect(held).toHaveLength(1)
  })
})

describe('close() with a signer that answers in a promise (Web Crypto: browsers, Deno, Bun, Workers)', () => {
  it('waits for events deliver() took before it, still being signed, and sends them before it resolves', async () => {
    sink = await startSink(() => ({ status: 200 }))
    const destination = new WebhookDestinationBase(
      { webhooks: [{ url: sink.url }], sharedSecret: 's3cret' },
      webPlatform,
    )
    const deliveries = Array.from({ length: 20 }, (_, index) =>
      destination.deliver({ type: 'identify', userId: `u${index}` }),
    )
    await destination.close()
    const sentBeforeClose = sink.requests.length
    const results = await Promise.all(deliveries)
    expect(results.map((result) => result.status)).toEqual(Array(20).fill('delivered'))
    expect(sentBeforeClose).toBe(20)
  })

  /** A transport that accepts every request and counts them. */
  function acceptingTransport(): WebhookTransport & { calls: number } {
    const transport = {
      calls: 0,
      send: async () => {
        transport.calls++
        return { ok: true as const, status: 200, retryAfter: null }
      },
    }
    return transport
  }

  it('ends an event whose signature comes after its deadline with ERR_CLOSED, unsent', async () => {
    let sign: ((signature: string) => void) | undefined
    const transport = acceptingTransport()
    const destination = new WebhookDestinationBase(
      { webhooks: [{ url: 'https://a.test/' }], sharedSecret: 's3cret', transport },
      { transport: () => transport, signer: () => () => new Promise<string>((resolve) => (sign = resolve)) },
    )
    const delivery = destination.deliver({ type: 'identify', userId: 'u1' })
    await destination.close({ timeout: 20 })
    sign?.('a1b2')
    const result = await delivery
    expect(result.urls[0]).toMatchObject({ status: 'failed', attempts: 0, lastError: { code: 'ERR_CLOSED' } })
    // Never sent: the message does not say it was tried.
    expect(result.urls[0]?.lastError?.message).toBe(
      'The destination was closed while this event waited for https://a.test/, so it got no further request. Deliver the event again once a destination runs.',
    )
    expect(transport.calls).toBe(0)
  })

  it('ends an event signed after close() began at a URL its rate holds back with ERR_CLOSED, as close() ends those queued', async () => {
    const signatures: Array<(signature: string) => void> = []
    const transport = acceptingTransport()
    const destination = new WebhookDestinationBase(
      { webhooks: [{ url: 'https://a.test/' }], sharedSecret: 's3cret', transport, ratePerUrl: 1 },
      { transport: () => transport, signer: () => () => new Promise<string>((resolve) => signatures.push(resolve)) },
    )
    const first = destination.deliver({ type: 'identify', userId: 'u1' })
    const second = destination.deliver({ type: 'identify', userId: 'u2' })
    await expect.poll(() => signatures.length).toBe(2)
    signatures[0]?.('a1')
    expect((await first).status).toBe('delivered')
    // The first took the URL's token for this second: the second could not leave for a while.
    const closing = destination.close({ timeout: 60_000 })
    signatures[1]?.('b2')
    await closing
    expect((await second).urls[0]).toMatchObject({ status: 'failed', attempts: 0, lastError: { code: 'ERR_CLOSED' } })
    expect(transport.calls).toBe(1)
  })
})

describe('concurrency', () => {
  /** The real Node transport, counting how many requests it has in flight at most. */
  function countingTransport(): { transport: WebhookTransport; peak: () => number } {
    const inner = createHttp1Transport()
    let inFlight = 0
    let peak = 0
    return {
      transport: {
        async send(request) {
          peak = Math.max(peak, ++inFlight)
          try {
            return await inner.send(request)
          } finally {
            inFlight--
          }
        },
        close: () => inner.close?.() ?? Promise.resolve(),
      },
      peak: () => peak,
    }
  }

  it('keeps requests in flight within maxConcurrency, and delivers every queued round', async () => {
    sink = await startSink(() => ({ status: 200, delayMs: 20 }))
    const { transport, peak } = countingTransport()
    const destination = new WebhookDestination({
      webhooks: [{ url: `${sink.url}/a` }, { url: `${sink.url}/b` }],
      mode: 'each',
      maxConcurrency: 6,
      transport,
    })
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, index) => destination.deliver({ type: 'identify', userId: `u${index}` })),
    )
    await destination.close()
    expect(results.every((result) => result.status === 'delivered')).toBe(true)
    expect(sink.requests).toHaveLength(80)
    expect(peak()).toBeLessThanOrEqual(6)
    expect(peak()).toBeGreaterThanOrEqual(4)
  })

  it('sends, on close(), the rounds still waiting for a slot instead of dropping them', async () => {
    sink = await startSink(() => ({ status: 200, delayMs: 50 }))
    const destination = new WebhookDestination({ webhooks: [{ url: sink.url }], maxConcurrency: 1 })
    const deliveries = Array.from({ length: 5 }, (_, index) =>
      destination.deliver({ type: 'identify', userId: `u${index}` }),
    )
    await destination.close()
    expect((await Promise.all(deliveries)).map((result) => result.status)).toEqual(Array(5).fill('delivered'))
  })
})

describe('scheduling retries', () => {
  it('holds 1,000 events waiting to retry with one timer, not one each', async () => {
    sink = await startSink(() => ({ status: 500 }))
    const destination = new WebhookDestination({ webhooks: [{ url: sink.url }], backoff: () => 60_000 })
    const before = liveTimers()
    const deliveries = Array.from({ length: 1_000 }, (_, index) =>
      destination.deliver({ type: 'track', userId: `u${index}`, event: 'E' }),
    )
    await expect.poll(() => destination.pendingRetries, { timeout: 10_000 }).toBe(1_000)
    expect(liveTimers() - before).toBeLessThanOrEqual(2)
    await destination.close()
    const results = await Promise.all(deliveries)
    expect(results.every((result) => result.status === 'failed')).toBe(true)
  })

  it('runs 100,000 scheduled items in due order from one timer', async () => {
    const ran: number[] = []
    const scheduler = new RetryScheduler<{ dueAt: number; id: number }>(new MemoryRetryStore(), (item) =>
      ran.push(item.id),
    )
    const now = performance.now()
    const before = liveTimers()
    const order = Array.from({ length: 100_000 }, (_, id) => id).sort(() => Math.random() - 0.5)
    for (const id of order) scheduler.schedule({ id, dueAt: now + 20 + (id % 1_000) / 10 })
    expect(liveTimers() - before).toBe(1)
    expect(scheduler.size).toBe(100_000)
    await expect.poll(() => ran.length, { timeout: 5_000 }).toBe(100_000)
    const dueOf = (id: number) => id % 1_000
    for (let index = 1; index < ran.length; index++)
      expect(dueOf(ran[index] ?? 0)).toBeGreaterThanOrEqual(dueOf(ran[index - 1] ?? 0))
    expect(liveTimers() - before).toBeLessThanOrEqual(0)
  })
})
