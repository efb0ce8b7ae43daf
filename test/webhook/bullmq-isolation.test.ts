// One bad receiver must not slow the others, on BullMQ too. A worker's attempt to a URL takes one of
// that URL's slots in the process; when they are taken by attempts that last, a job leaves that URL
// for later (delayed in Redis) and frees its worker slot. Judged on conditions, not speeds: the
// healthy URL gets every event while the bad one's first attempts are still in flight (their
// timeout is longer than the wait), and nothing acknowledged is lost.
import { createHash } from 'node:crypto'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { WebhookQueue, WebhookWorker } from '../../src/webhook/bullmq/index.js'
import type { UrlStateNotice } from '../../src/webhook/index.js'
import { startChaosSink } from '../helpers/chaos-sink.js'
import { freePort } from '../helpers/ports.js'
import { redisForFile } from '../helpers/redis-suite.js'
import { startSink, type Sink } from '../helpers/sink.js'

const EVENTS = 300
/** The worker's concurrency: each URL of two gets an equal share, half of it, by default. */
const CONCURRENCY = 16
const SLOTS = CONCURRENCY / 2
/** Longer than any wait below: a bad URL's attempt that the healthy one had to wait for would fail the test. */
const TIMEOUT_MS = 15_000

const redis = redisForFile()
/** Closed first: receivers (a black hole's held requests end at once), then workers and queues. */
const receivers: Array<{ close(): Promise<void> }> = []
const clients: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((item) => item.close()))
  await Promise.all(clients.splice(0).map((item) => item.close()))
})

async function healthy(): Promise<Sink> {
  const sink = await startSink(() => ({ status: 200 }))
  receivers.push(sink)
  return sink
}

/** The bad URLs: a black hole (accepts, never answers), a slow one, one refusing connections, a 503 storm. */
const BAD: Record<string, () => Promise<{ url: string; received: () => number }>> = {
  'black-holed': async () => {
    const sink = await startChaosSink(() => ({ kind: 'hang' }))
    receivers.push(sink)
    return { url: sink.url, received: () => sink.requests }
  },
  'slow (answers after 12 s)': async () => {
    const sink = await startSink(() => ({ status: 200, delayMs: 12_000 }))
    receivers.push(sink)
    return { url: sink.url, received: () => sink.requests.length }
  },
  'refusing connections': async () => ({ url: `http://127.0.0.1:${await freePort()}`, received: () => 0 }),
  'answering 503': async () => {
    const sink = await startSink(() => ({ status: 503 }))
    receivers.push(sink)
    return { url: sink.url, received: () => sink.requests.length }
  },
}

/** A receiver that holds every request until `answer()`, then answers 200 to those held and to every later one. */
async function heldSink(): Promise<{ url: string; ids: string[]; answer(): void }> {
  const ids: string[] = []
  const held: ServerResponse[] = []
  let answering = false
  const reply = (response: ServerResponse) => response.writeHead(200).end('{}')
  const server = createServer((request, response) => {
    ids.push(String(request.headers['webhook-id']))
    request.resume()
    request.on('end', () => (answering ? reply(response) : held.push(response)))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  receivers.push({
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    ids,
    answer() {
      answering = true
      for (const response of held.splice(0)) reply(response)
    },
  }
}

let queues = 0
function connection() {
  return { host: '127.0.0.1', port: redis.server.port, maxRetriesPerRequest: null }
}

function producer(name: string): WebhookQueue {
  const queue = new WebhookQueue({ connection: connection(), name })
  clients.push(queue)
  return queue
}

function worker(name: string, settings: ConstructorParameters<typeof WebhookWorker>[0]): WebhookWorker {
  const created = new WebhookWorker(
    { timeoutMs: TIMEOUT_MS, ...settings },
    { connection: connection(), name, concurrency: CONCURRENCY },
  )
  clients.push(created)
  return created
}

const track = (index: number) => ({ type: 'track' as const, userId: 'u1', event: 'E', messageId: `evt-${index}` })

describe.runIf(redis.available)('a WebhookWorker with a bad URL beside a healthy one', () => {
  describe.each(Object.keys(BAD))('a %s URL', (kind) => {
    it("mode 'each': the healthy URL gets every event, the bad one holds only its own slots, and every event waits in Redis for it", async () => {
      const name = `isolation-${++queues}`
      const good = await healthy()
      const bad = await (BAD[kind] as () => Promise<{ url: string; received: () => number }>)()
      const queue = producer(name)
      const delivering = worker(name, {
        webhooks: [{ url: bad.url }, { url: good.url }],
        mode: 'each',
        backoff: () => 60_000,
      })
      await delivering.ready()
      for (let index = 0; index < EVENTS; index += 50)
        await Promise.all(Array.from({ length: 50 }, (_, offset) => queue.enqueue(track(index + offset))))
      await expect.poll(() => good.requests.length, { timeout: TIMEOUT_MS - 3_000 }).toBe(EVENTS)
      // Each request the silent or slow URL got is still out: no more than its slots.
      expect(bad.received()).toBeLessThanOrEqual(kind.startsWith('black') || kind.startsWith('slow') ? SLOTS : EVENTS)
      // Nothing is lost or failed: every event waits (delayed, or active on the bad URL's slots) for the bad URL.
      const counts = await queue.counts()
      expect(counts.failed).toBe(0)
      expect(counts.delayed + counts.active + counts.waiting).toBe(EVENTS)
      const [badUrl, goodUrl] = delivering.backlog()
      expect(badUrl?.slots).toBe(SLOTS)
      expect(badUrl?.inFlight).toBeLessThanOrEqual(SLOTS)
      expect(goodUrl).toMatchObject({ inFlight: 0, waiting: 0, circuit: 'closed' })
      // Active jobs: those holding the bad URL's slots, and for a moment those that come back to find them taken.
      await expect.poll(async () => (await queue.counts()).active, { timeout: 5_000 }).toBeLessThanOrEqual(SLOTS)
    })
  })

  it('a slow URL gets every event once it answers, each exactly once, and every event is reported delivered', async () => {
    const name = `isolation-${++queues}`
    const good = await healthy()
    const slow = await heldSink()
    const queue = producer(name)
    const delivering = worker(name, { webhooks: [{ url: slow.url }, { url: good.url }], mode: 'each' })
    const delivered = new Set<string>()
    delivering.on('delivered', (result) => delivered.add(result.eventId))
    // The healthy URL's attempts are told as they are answered, not when the held URL answers.
    const toldAccepted = new Set<string>()
    delivering.on('attempt', (notice) => {
      if (notice.accepted && notice.url === `${good.url}/`) toldAccepted.add(notice.eventId)
    })
    await delivering.ready()
    await Promise.all(Array.from({ length: 100 }, (_, index) => queue.enqueue(track(index))))
    await expect.poll(() => good.requests.length, { timeout: 10_000 }).toBe(100)
    await expect.poll(() => toldAccepted.size, { timeout: 10_000 }).toBe(100)
    expect(slow.ids.length).toBeLessThanOrEqual(SLOTS)
    slow.answer()
    await expect.poll(() => delivered.size, { timeout: 20_000 }).toBe(100)
    const ids = slow.ids
    expect(new Set(ids).size).toBe(100)
    expect(ids).toHaveLength(100)
  })

  it("opens a URL's breaker after a run of failures, stops spending attempts on it, probes once, and closes on success", async () => {
    const name = `isolation-${++queues}`
    let failing = true
    const flaky = await startSink(() => ({ status: failing ? 503 : 200 }))
    receivers.push(flaky)
    const queue = producer(name)
    const delivering = worker(name, {
      webhooks: [{ url: flaky.url }, { url: (await healthy()).url }],
      mode: 'each',
      backoff: () => 50,
      breaker: { failures: 5, coolDownMs: 2_000 },
    })
    const states: UrlStateNotice[] = []
    /** Requests the URL had received at each change of its breaker. */
    const received: number[] = []
    delivering.on('url-state', (notice) => {
      states.push(notice)
      received.push(flaky.requests.length)
    })
    const delivered = new Set<string>()
    delivering.on('delivered', (result) => delivered.add(result.eventId))
    await delivering.ready()
    await Promise.all(Array.from({ length: 20 }, (_, index) => queue.enqueue(track(index))))
    await expect.poll(() => states.map((state) => state.circuit), { timeout: 10_000 }).toContain('open')
    // Open: once the attempts that started before it have ended (no job active), no attempt is
    // spent until the cool-down ends; then one probe, which fails (still 503).
    await expect.poll(async () => (await queue.counts()).active, { timeout: 10_000 }).toBe(0)
    const atOpening = flaky.requests.length
    await expect.poll(() => states.map((state) => state.circuit), { timeout: 10_000 }).toContain('half-open')
    await expect.poll(() => states.filter((state) => state.circuit === 'open').length, { timeout: 10_000 }).toBe(2)
    // Nothing between the quiet open breaker and its half-opening; the probe alone until it opened again.
    expect(received[1]).toBe(atOpening)
    expect(received[2]).toBe(atOpening + 1)
    expect(flaky.requests.length).toBe(atOpening + 1)
    failing = false
    await expect.poll(() => states.at(-1)?.circuit, { timeout: 10_000 }).toBe('closed')
    await expect.poll(() => delivered.size, { timeout: 20_000 }).toBe(20)
    expect(states.every((state) => state.url === `${flaky.url}/` || state.url === flaky.url)).toBe(true)
  })

  it("fails an event whose window ends while its URL's breaker is open with ERR_CIRCUIT_OPEN", async () => {
    const name = `isolation-${++queues}`
    const down = await startSink(() => ({ status: 503 }))
    receivers.push(down)
    const queue = producer(name)
    const delivering = worker(name, {
      webhooks: [{ url: down.url }, { url: (await healthy()).url }],
      mode: 'each',
      backoff: () => 20,
      retryWindowMs: 1_500,
      breaker: { failures: 2, coolDownMs: 60_000 },
    })
    const failed: string[] = []
    delivering.on('failed', (result) => {
      const code = result.urls[0]?.lastError?.code
      if (code !== undefined) failed.push(code)
    })
    await delivering.ready()
    await Promise.all(Array.from({ length: 5 }, (_, index) => queue.enqueue(track(index))))
    await expect.poll(() => failed.length, { timeout: 10_000 }).toBe(5)
    expect(failed).toContain('ERR_CIRCUIT_OPEN')
    // 'failed' is told before BullMQ moves the job to its failed set: wait for the dead letters themselves.
    await expect.poll(async () => (await queue.counts()).failed, { timeout: 10_000 }).toBe(5)
    const letters = await queue.deadLetters()
    expect(letters).toHaveLength(5)
    expect(letters.some((letter) => letter.reason.includes('ERR_CIRCUIT_OPEN'))).toBe(true)
  })

  it('names the failure that opened the breaker beside ERR_CIRCUIT_OPEN in each dead letter, for an event never sent too', async () => {
    const name = `isolation-${++queues}`
    // Nothing listens: connections are refused.
    const refused = `http://127.0.0.1:${await freePort()}/in`
    const queue = producer(name)
    const delivering = worker(name, {
      webhooks: [{ url: refused }],
      backoff: () => 20,
      retryWindowMs: 1_500,
      breaker: { failures: 2, coolDownMs: 60_000 },
    })
    await delivering.ready()
    const opened = new Promise<void>((resolve) =>
      delivering.on('url-state', ({ circuit }) => {
        if (circuit === 'open') resolve()
      }),
    )
    await Promise.all([0, 1].map((index) => queue.enqueue(track(index))))
    await opened
    // Enqueued once the breaker is open: held from their first round to the end of their window.
    await Promise.all([2, 3, 4, 5].map((index) => queue.enqueue(track(index))))
    await expect.poll(async () => (await queue.counts()).failed, { timeout: 10_000 }).toBe(6)
    const letters = await queue.deadLetters()
    const held = letters.filter((letter) => letter.urls[0]?.failure?.code === 'ERR_CIRCUIT_OPEN')
    expect(held.filter((letter) => letter.urls[0]?.attempts === 0).length).toBeGreaterThanOrEqual(4)
    for (const letter of held) {
      expect(letter.urls[0]?.failure?.cause).toMatch(/^Could not reach http:\/\/127\.0\.0\.1:\d+\/in \(.*ECONNREFUSED/)
      expect(letter.reason).toMatch(
        /: ERR_CIRCUIT_OPEN \(Could not reach http:\S+ \(connect ECONNREFUSED [\d.:]+\)\.\)$/,
      )
    }
  })

  it("shares each URL's breaker between workers: one opened by a worker holds back another that never failed there", async () => {
    const name = `isolation-${++queues}`
    const down = await startSink(() => ({ status: 503 }))
    receivers.push(down)
    const queue = producer(name)
    const settings = { webhooks: [{ url: down.url }], backoff: () => 20, breaker: { failures: 3, coolDownMs: 60_000 } }
    const first = worker(name, settings)
    const opened = new Promise<void>((resolve) =>
      first.on('url-state', (notice) => notice.circuit === 'open' && resolve()),
    )
    await first.ready()
    await Promise.all(Array.from({ length: 5 }, (_, index) => queue.enqueue(track(index))))
    await opened
    // Written to Redis as it opened: what the next worker reads.
    await expect.poll(() => redis.raw.keys(`bull:${name}:breaker:*`), { timeout: 5_000 }).toHaveLength(1)
    await first.close()
    const before = down.requests.length
    // A second worker, which has sent nothing to the URL, takes a new event: it follows the breaker.
    const second = worker(name, settings)
    const followed: UrlStateNotice[] = []
    second.on('url-state', (notice) => followed.push(notice))
    await second.ready()
    await queue.enqueue(track(99))
    await expect.poll(() => followed.map((notice) => notice.circuit), { timeout: 10_000 }).toEqual(['open'])
    await expect.poll(async () => (await queue.counts()).delayed, { timeout: 10_000 }).toBe(6)
    expect(down.requests.length).toBe(before)
  })

  it('lets one worker of many probe a URL per cool-down, none while a failed probe has opened it again', async () => {
    const { SharedBreakers } = await import('../../src/webhook/bullmq/shared-breakers.js')
    const { Redis } = await import('ioredis')
    const clients = [0, 1, 2].map(() => new Redis({ host: '127.0.0.1', port: redis.server.port }))
    try {
      const prefix = `bull:probe-${++queues}`
      const clock = { now: Date.now() }
      const workers = clients.map(
        (client) =>
          new SharedBreakers({
            store: async () => client,
            prefix,
            timeoutMs: 5_000,
            coolDownMs: 1_000,
            now: () => clock.now,
            failed: (error) => {
              throw error
            },
          }),
      )
      type Shared = InstanceType<typeof SharedBreakers>
      const [a, b, c] = workers as [Shared, Shared, Shared]
      const url = 'https://hooks.example.com/in'
      const claims = async () =>
        (await Promise.all(workers.map((shared) => shared.claimProbe(url)))).map((claim) => claim.claimed)
      const coolDown = () => new Promise((resolve) => setTimeout(resolve, 1_050))
      expect(await b.read(url)).toBeUndefined()
      a.open(url, 1_000)
      await expect.poll(() => c.read(url)).not.toBeUndefined()
      // Still open: nobody probes, and each hears until when.
      const claim = await b.claimProbe(url)
      expect(claim.claimed).toBe(false)
      expect(claim.openUntil).toBeGreaterThan(clock.now)
      await coolDown()
      const first = await claims()
      expect(first.filter(Boolean)).toHaveLength(1)
      // The probe failed: opened again. However old their readings, nobody probes before the new cool-down ends.
      const prober = workers[first.indexOf(true)] as Shared
      prober.open(url, 1_000)
      await expect.poll(async () => (await claims()).filter(Boolean).length).toBe(0)
      await coolDown()
      expect((await claims()).filter(Boolean)).toHaveLength(1)
      // Its success closes it for everyone.
      prober.close(url)
      await expect
        .poll(() => clients[0]?.exists(`${prefix}:breaker:${createHash('sha1').update(url).digest('hex')}`))
        .toBe(0)
    } finally {
      for (const client of clients) client.disconnect()
    }
  })

  it('keeps ratePerUrl across workers: two workers together send no more than the rate, in bursts of a second', async () => {
    const name = `isolation-${++queues}`
    const sink = await healthy()
    const queue = producer(name)
    const settings = { webhooks: [{ url: sink.url }], ratePerUrl: 5 }
    const workers = [worker(name, settings), worker(name, settings)]
    await Promise.all(workers.map((each) => each.ready()))
    await Promise.all(Array.from({ length: 20 }, (_, index) => queue.enqueue(track(index))))
    await expect.poll(() => sink.requests.length, { timeout: 15_000 }).toBe(20)
    // At 5 a second with a burst of one second's worth, no 0.9 s holds more than 5 + 5.
    const times = sink.requests.map((request) => request.at).sort((a, b) => a - b)
    const busiest = Math.max(...times.map((start) => times.filter((at) => at >= start && at < start + 900).length))
    expect(busiest).toBeLessThanOrEqual(10)
    expect(new Set(sink.requests.map((request) => request.headers['webhook-id'])).size).toBe(20)
  })
})
