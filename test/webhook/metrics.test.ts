// The metrics of `eventwire/webhook/otel`, read back through the OpenTelemetry SDK as an
// application's exporter would see them: names, units, attributes and counts, from the in-memory
// engine against real loopback receivers (2xx, 503, a black hole) and from the BullMQ engine
// against a real Redis.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { WebhookQueue, WebhookWorker } from '../../src/webhook/bullmq/index.js'
import { OptionsError, WebhookDestination } from '../../src/webhook/index.js'
import { instrumentWebhooks } from '../../src/webhook/otel/index.js'
import { startChaosSink } from '../helpers/chaos-sink.js'
import { metricsUnderTest, pointOf, pointsOf, type MetricsUnderTest } from '../helpers/metrics.js'
import { startRedis, type RedisServer } from '../helpers/redis.js'
import { isInstalled, REDIS } from '../helpers/services.js'
import { startSink } from '../helpers/sink.js'
import { ended } from '../helpers/ended.js'

/** The black hole's attempts end here: short, so the test does not wait long, and long enough to see it in flight. */
const HOLE_TIMEOUT_MS = 1_500

const open: Array<{ close(): Promise<void> }> = []
let otel: MetricsUnderTest
beforeAll(() => {
  otel = metricsUnderTest()
})
afterAll(() => otel.shutdown())
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()))
})

const track = (event: string, messageId: string) => ({ type: 'track' as const, userId: 'u1', event, messageId })
const portOf = (url: string) => Number(new URL(url).port)

describe('WebhookDestination metrics', () => {
  it('counts deliveries, attempts by status class, their durations, the breaker and the backlog, per URL', async () => {
    const ok = await startSink(() => ({ status: 200 }))
    const failing = await startSink(() => ({ status: 503 }))
    const hole = await startChaosSink(() => ({ kind: 'hang' }))
    open.push(ok, failing, hole)
    const healthy = new WebhookDestination({ webhooks: [{ url: ok.url }] })
    // Mode 'each', no retry window: each URL gets one attempt per event, and every event fails.
    // A breaker that opens at the first failure: the second event is not sent to the bad URLs.
    const mixed = new WebhookDestination({
      webhooks: [{ url: ok.url }, { url: failing.url }, { url: hole.url }],
      mode: 'each',
      timeoutMs: HOLE_TIMEOUT_MS,
      retryWindowMs: 0,
      breaker: { failures: 1, coolDownMs: 600_000 },
    })
    open.push(healthy, mixed)
    // By port: the engine names URLs normalized (a trailing slash added).
    const labels = new Map([
      [portOf(ok.url), 'ok'],
      [portOf(failing.url), 'failing'],
    ])
    instrumentWebhooks(healthy, { meterProvider: otel.provider, attributes: { engine: 'healthy' } })
    instrumentWebhooks(mixed, {
      meterProvider: otel.provider,
      attributes: { engine: 'mixed' },
      urlLabel: (url) => labels.get(portOf(url)),
    })

    const healthyEnded = ended(healthy, 3)
    for (const id of ['h1', 'h2', 'h3']) void healthy.deliver(track('Paid', id))
    await healthyEnded

    // The first mixed event: collected while its request to the black hole is in flight.
    const answered = new Promise<void>((resolve) => {
      let count = 0
      mixed.on('attempt', () => {
        if (++count === 2) resolve()
      })
    })
    const first = mixed.deliver(track('Paid', 'm1'))
    await answered
    await expect.poll(() => hole.requests).toBe(1)
    const during = await otel.collect()
    const holeServer = { engine: 'mixed', 'server.port': portOf(hole.url) }
    expect(
      pointOf(during.get('eventwire.webhook.queue.depth'), { ...holeServer, 'eventwire.webhook.queue.state': 'active' })
        .value,
    ).toBe(1)
    const firstResult = await first
    expect(firstResult.status).toBe('failed')
    // It ended when the black hole's attempt timed out: its time counts from deliver().
    expect(firstResult.durationMs).toBeGreaterThanOrEqual(HOLE_TIMEOUT_MS - 50)
    expect((await mixed.deliver(track('Paid', 'm2'))).status).toBe('failed')

    const metrics = await otel.collect()
    const deliveries = metrics.get('eventwire.webhook.deliveries')
    expect(deliveries?.unit).toBe('{event}')
    expect(deliveries?.type).toBe('sum')
    expect(pointOf(deliveries, { engine: 'healthy', 'eventwire.webhook.outcome': 'delivered' }).value).toBe(3)
    expect(pointOf(deliveries, { engine: 'mixed', 'eventwire.webhook.outcome': 'failed' }).value).toBe(2)
    expect(pointsOf(deliveries)).toHaveLength(2)

    // From deliver() to the 2xx: delivered events only.
    const latency = metrics.get('eventwire.webhook.delivery.duration')
    expect(latency?.unit).toBe('s')
    expect(latency?.type).toBe('histogram')
    expect(pointOf(latency, { engine: 'healthy' }).count).toBe(3)
    expect(pointsOf(latency, { engine: 'mixed' })).toEqual([])
    expect(pointOf(latency, { engine: 'healthy' }).boundaries.at(-1)).toBe(14_400)

    const attempts = metrics.get('eventwire.webhook.attempts')
    expect(attempts?.unit).toBe('{attempt}')
    const server = (url: string) => ({ 'server.address': '127.0.0.1', 'server.port': portOf(url) })
    const at = (engine: string, url: string, statusClass: string) =>
      pointOf(attempts, { engine, ...server(url), 'eventwire.webhook.status_class': statusClass })
    expect(at('healthy', ok.url, '2xx').value).toBe(3)
    expect(at('healthy', ok.url, '2xx').attributes['eventwire.webhook.outcome']).toBe('accepted')
    // No urlLabel: the URL itself is never an attribute.
    expect(at('healthy', ok.url, '2xx').attributes['eventwire.webhook.url']).toBeUndefined()
    expect(at('mixed', ok.url, '2xx').value).toBe(2)
    expect(at('mixed', ok.url, '2xx').attributes['eventwire.webhook.url']).toBe('ok')
    expect(at('mixed', failing.url, '5xx').value).toBe(1)
    expect(at('mixed', failing.url, '5xx').attributes).toMatchObject({
      'eventwire.webhook.outcome': 'failed',
      'eventwire.webhook.url': 'failing',
    })
    expect(at('mixed', hole.url, 'timeout').value).toBe(1)
    expect(at('mixed', hole.url, 'timeout').attributes['eventwire.webhook.url']).toBeUndefined()
    expect(pointsOf(attempts)).toHaveLength(4)

    const requests = metrics.get('http.client.request.duration')
    expect(requests?.unit).toBe('s')
    expect(requests?.type).toBe('histogram')
    const request = (engine: string, url: string) => pointOf(requests, { engine, ...server(url) })
    expect(request('healthy', ok.url).count).toBe(3)
    expect(request('healthy', ok.url).attributes).toEqual({
      engine: 'healthy',
      ...server(ok.url),
      'http.request.method': 'POST',
      'http.response.status_code': 200,
    })
    expect(request('mixed', failing.url).attributes).toMatchObject({
      'http.response.status_code': 503,
      'error.type': '503',
    })
    const timedOut = request('mixed', hole.url)
    expect(timedOut.attributes['error.type']).toBe('ERR_TIMEOUT')
    expect(timedOut.attributes['http.response.status_code']).toBeUndefined()
    expect(timedOut.count).toBe(1)
    // The request's time is the time until it timed out: measured, not assumed.
    expect(timedOut.sum).toBeGreaterThanOrEqual((HOLE_TIMEOUT_MS - 50) / 1000)
    expect(timedOut.boundaries).toEqual([0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10])

    const changes = metrics.get('eventwire.webhook.circuit.changes')
    expect(pointOf(changes, { ...server(failing.url), 'eventwire.webhook.circuit.state': 'open' }).value).toBe(1)
    expect(pointOf(changes, { ...server(hole.url), 'eventwire.webhook.circuit.state': 'open' }).value).toBe(1)
    expect(pointsOf(changes)).toHaveLength(2)

    // One series per URL and state: 1 for where the breaker stands, 0 for the others.
    const circuit = metrics.get('eventwire.webhook.circuit.status')
    expect(circuit?.type).toBe('gauge')
    const standing = (engine: string, url: string) =>
      pointsOf(circuit, { engine, ...server(url) })
        .filter((point) => point.value === 1)
        .map((point) => point.attributes['eventwire.webhook.circuit.state'])
    expect(standing('healthy', ok.url)).toEqual(['closed'])
    expect(standing('mixed', ok.url)).toEqual(['closed'])
    expect(standing('mixed', failing.url)).toEqual(['open'])
    expect(standing('mixed', hole.url)).toEqual(['open'])
    expect(pointsOf(circuit, { engine: 'mixed' })).toHaveLength(9)

    const depth = metrics.get('eventwire.webhook.queue.depth')
    expect(depth?.unit).toBe('{delivery}')
    expect(pointsOf(depth, { engine: 'mixed' }).map((point) => point.value)).toEqual(Array(9).fill(0))
  })

  it('listens to nothing when no SDK is registered, and leaves no listener after stop()', async () => {
    const ok = await startSink(() => ({ status: 200 }))
    open.push(ok)
    const destination = new WebhookDestination({ webhooks: [{ url: ok.url }] })
    open.push(destination)
    const events = ['attempt', 'delivered', 'failed', 'skipped', 'url-state'] as const
    const listeners = () => events.map((event) => destination.listenerCount(event))
    // No meterProvider and none registered: the API's no-op meter, which nothing could ever read.
    const unmeasured = instrumentWebhooks(destination)
    expect(listeners()).toEqual([0, 0, 0, 0, 0])
    expect((await destination.deliver(track('Paid', 'noop-1'))).status).toBe('delivered')
    unmeasured.stop()
    const measured = instrumentWebhooks(destination, { meterProvider: otel.provider })
    expect(listeners()).toEqual([1, 1, 1, 1, 1])
    measured.stop()
    measured.stop()
    expect(listeners()).toEqual([0, 0, 0, 0, 0])
  })

  it('refuses what it cannot measure, and options it does not know', () => {
    expect(() => instrumentWebhooks({} as WebhookDestination)).toThrow(OptionsError)
    const destination = new WebhookDestination({ webhooks: [{ url: 'https://hooks.example.com/in' }] })
    open.push(destination)
    expect(() => instrumentWebhooks(destination, { meterprovider: otel.provider } as never)).toThrow(
      /meterprovider`: no such option/,
    )
    expect(() => instrumentWebhooks(destination, { countsTimeout: -1 })).toThrow(OptionsError)
    expect(() => instrumentWebhooks(destination, { urlLabel: 'host' as never })).toThrow(/urlLabel/)
    expect(() => instrumentWebhooks(destination, { destinationLabel: true as never })).toThrow(/destinationLabel/)
    expect(() => instrumentWebhooks(destination, { attributes: 'engine=a' as never })).toThrow(/attributes/)
    expect(() => instrumentWebhooks(destination, { meterProvider: {} as never })).toThrow(/meterProvider/)
  })
})

describe('queue gauges', () => {
  it('keep one counts() in flight while Redis is slow: a collection waits for it countsTimeout at most', async () => {
    const local = metricsUnderTest()
    type Counts = Awaited<ReturnType<WebhookQueue['counts']>>
    const counted: Counts = {
      waiting: 7,
      parked: 2,
      delayed: 6,
      retrying: 2,
      heldByBreaker: 3,
      heldForSlots: 1,
      active: 1,
      failed: 3,
      lateMs: 1_500,
      oldestWaitingMs: 2_500,
      urls: [{ url: 'https://hooks.example.com/in', heldByBreaker: 3, heldForSlots: 1 }],
    }
    let calls = 0
    let answer: (counts: Counts) => void = () => undefined
    const stalled = new Promise<Counts>((resolve) => {
      answer = resolve
    })
    const slow = {
      counts: () => {
        calls++
        return stalled
      },
    }
    const measured = instrumentWebhooks(slow, { meterProvider: local.provider, countsTimeout: 20 })
    for (let collection = 0; collection < 3; collection++) {
      expect((await local.collect()).get('eventwire.webhook.queue.depth')?.points ?? []).toEqual([])
    }
    expect(calls).toBe(1)
    answer(counted)
    const metrics = await local.collect()
    expect(
      pointOf(metrics.get('eventwire.webhook.queue.depth'), { 'eventwire.webhook.queue.state': 'waiting' }).value,
    ).toBe(7)
    const depth = metrics.get('eventwire.webhook.queue.depth')
    expect(pointOf(depth, { 'eventwire.webhook.queue.state': 'retrying' }).value).toBe(2)
    expect(pointOf(depth, { 'eventwire.webhook.queue.state': 'held' }).value).toBe(4)
    expect(pointOf(depth, { 'eventwire.webhook.queue.state': 'active' }).value).toBe(1)
    expect(pointOf(metrics.get('eventwire.webhook.queue.oldest_waiting_age')).value).toBe(2.5)
    expect(pointOf(metrics.get('eventwire.webhook.queue.lateness')).value).toBe(1.5)
    // Per URL, by what holds its events back, named as every other measurement of the URL.
    const held = metrics.get('eventwire.webhook.queue.held')
    const server = { 'server.address': 'hooks.example.com', 'server.port': 443 }
    expect(pointOf(held, { ...server, 'eventwire.webhook.held.reason': 'breaker' }).value).toBe(3)
    expect(pointOf(held, { ...server, 'eventwire.webhook.held.reason': 'slots' }).value).toBe(1)
    expect(pointOf(metrics.get('eventwire.webhook.queue.dead_letters')).value).toBe(3)
    // A failed read (Redis down) observes nothing, with no unhandled rejection; the next collection reads again.
    const before = calls
    slow.counts = () => {
      calls++
      return Promise.reject(new Error('Connection is closed.'))
    }
    await local.collect()
    await local.collect()
    expect(calls).toBe(before + 2)
    measured.stop()
    await local.shutdown()
  })
})

// Without redis-server this suite is skipped, and the global setup says so (or fails under CI).
const withRedis = isInstalled(REDIS.executable)

describe.runIf(withRedis)('WebhookWorker and WebhookQueue metrics on a real Redis', () => {
  let redis: RedisServer
  beforeAll(async () => {
    redis = await startRedis({ persistent: true, appendfsync: 'everysec' })
  })
  afterAll(() => redis.dispose())

  it('counts what the worker delivers and dead-letters, and observes the queue', async () => {
    const local = metricsUnderTest()
    // 400 for the event named 'Refused': final at once, a dead letter.
    const sink = await startSink((request) => ({ status: request.body.includes('"Refused"') ? 400 : 200 }))
    open.push(sink)
    const connection = { host: '127.0.0.1', port: redis.port }
    const queue = new WebhookQueue({ connection, name: 'metrics' })
    open.push(queue)
    instrumentWebhooks(queue, { meterProvider: local.provider, attributes: { queue: 'metrics' } })
    for (const id of ['q1', 'q2', 'q3']) await queue.enqueue(track('Paid', id))
    await queue.enqueue(track('Refused', 'q4'))

    // No worker yet: all four wait.
    const waiting = await local.collect()
    const depth = (metrics: typeof waiting, state: string) =>
      pointOf(metrics.get('eventwire.webhook.queue.depth'), {
        queue: 'metrics',
        'eventwire.webhook.queue.state': state,
      })
    expect(depth(waiting, 'waiting').value).toBe(4)
    expect(depth(waiting, 'retrying').value).toBe(0)
    expect(depth(waiting, 'held').value).toBe(0)
    expect(pointOf(waiting.get('eventwire.webhook.queue.lateness')).value).toBeGreaterThanOrEqual(0)
    expect(depth(waiting, 'active').value).toBe(0)
    expect(pointOf(waiting.get('eventwire.webhook.queue.dead_letters')).value).toBe(0)
    const age = waiting.get('eventwire.webhook.queue.oldest_waiting_age')
    expect(age?.unit).toBe('s')
    expect(pointOf(age).value).toBeGreaterThanOrEqual(0)

    const worker = new WebhookWorker(
      { webhooks: [{ url: sink.url }] },
      { connection: { ...connection, maxRetriesPerRequest: null }, name: 'metrics' },
    )
    open.push(worker)
    instrumentWebhooks(worker, { meterProvider: local.provider, attributes: { queue: 'metrics' } })
    const results = ended(worker, 4)
    await worker.ready()
    // From the job's timestamp: each result knows how long its event took since enqueue().
    for (const result of await results) expect(result.durationMs).toBeGreaterThanOrEqual(0)
    // 'failed' is told before BullMQ moves the job to the failed set.
    await expect.poll(async () => (await queue.counts()).failed).toBe(1)

    const metrics = await local.collect()
    const deliveries = metrics.get('eventwire.webhook.deliveries')
    expect(pointOf(deliveries, { 'eventwire.webhook.outcome': 'delivered' }).value).toBe(3)
    expect(pointOf(deliveries, { 'eventwire.webhook.outcome': 'failed' }).value).toBe(1)
    // From enqueue() (the job's timestamp) to the 2xx: at least the time the events waited above.
    const latency = pointOf(metrics.get('eventwire.webhook.delivery.duration'), { queue: 'metrics' })
    expect(latency.count).toBe(3)
    const attempts = metrics.get('eventwire.webhook.attempts')
    const server = { 'server.address': '127.0.0.1', 'server.port': portOf(sink.url) }
    expect(pointOf(attempts, { ...server, 'eventwire.webhook.status_class': '2xx' }).value).toBe(3)
    expect(pointOf(attempts, { ...server, 'eventwire.webhook.status_class': '4xx' }).value).toBe(1)
    const requests = metrics.get('http.client.request.duration')
    expect(pointOf(requests, { 'http.response.status_code': 200 }).count).toBe(3)
    expect(pointOf(requests, { 'http.response.status_code': 400 }).attributes['error.type']).toBe('400')
    // The worker's breaker of the URL, as its process sees it: closed. No per-URL depth: that waits in Redis.
    const circuit = metrics.get('eventwire.webhook.circuit.status')
    expect(pointOf(circuit, { ...server, 'eventwire.webhook.circuit.state': 'closed' }).value).toBe(1)
    expect(pointOf(circuit, { ...server, 'eventwire.webhook.circuit.state': 'open' }).value).toBe(0)

    expect(depth(metrics, 'waiting').value).toBe(0)
    expect(pointOf(metrics.get('eventwire.webhook.queue.dead_letters')).value).toBe(1)
    expect(pointOf(metrics.get('eventwire.webhook.queue.oldest_waiting_age')).value).toBe(0)
    await local.shutdown()
  })

  it("names a registry destination's deliveries and attempts by destinationLabel, and leaves out those it returns nothing for", async () => {
    const local = metricsUnderTest()
    const sink = await startSink()
    open.push(sink)
    const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null }
    const queue = new WebhookQueue({ connection, name: 'metrics-destinations' })
    open.push(queue)
    for (const id of ['acme', 'beta']) await queue.destinations.set({ id, webhooks: [{ url: `${sink.url}/${id}` }] })
    const worker = new WebhookWorker(
      { webhooks: [{ url: `${sink.url}/own` }] },
      { connection, name: 'metrics-destinations' },
    )
    open.push(worker)
    instrumentWebhooks(worker, {
      meterProvider: local.provider,
      destinationLabel: (id) => (id === 'beta' ? undefined : `customer-${id}`),
    })
    const results = ended(worker, 5)
    await worker.ready()
    await queue.enqueue(track('Paid', 'a1'), { destination: 'acme' })
    await queue.enqueue(track('Paid', 'a2'), { destination: 'acme' })
    await queue.enqueue(track('Paid', 'b1'), { destination: 'beta' })
    await queue.enqueue(track('Paid', 'o1'))
    await queue.enqueue(track('Paid', 'o2'))
    const told = await results
    // Results and notices name the registry destination; the worker's own webhooks, none.
    expect(told.map((result) => `${result.eventId}:${result.destination}`).sort()).toEqual([
      'a1:acme',
      'a2:acme',
      'b1:beta',
      'o1:undefined',
      'o2:undefined',
    ])

    const metrics = await local.collect()
    const deliveries = metrics.get('eventwire.webhook.deliveries')
    const destination = 'eventwire.webhook.destination'
    expect(pointOf(deliveries, { [destination]: 'customer-acme' }).value).toBe(2)
    // beta and the own webhooks: no destination attribute, one series.
    const unnamed = pointsOf(deliveries).filter((point) => point.attributes[destination] === undefined)
    expect(unnamed.map((point) => point.value)).toEqual([3])
    expect(pointOf(metrics.get('eventwire.webhook.attempts'), { [destination]: 'customer-acme' }).value).toBe(2)
    expect(pointOf(metrics.get('http.client.request.duration'), { [destination]: 'customer-acme' }).count).toBe(2)
    expect(pointOf(metrics.get('eventwire.webhook.delivery.duration'), { [destination]: 'customer-acme' }).count).toBe(
      2,
    )
    await local.shutdown()
  })
})
