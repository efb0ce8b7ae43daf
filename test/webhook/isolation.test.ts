// One bad receiver must not slow the others. The unit of work is one attempt to one URL: a URL that
// is silent, slow, refusing or failing holds only its own slots, its backlog is bounded and
// visible, and its circuit breaker stops spending attempts on it. Judged on conditions, not
// speeds: the healthy URL gets every event while the bad one's first attempts are still in
// flight (their timeout is longer than the wait).
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { WebhookDestination, type DeliveryResult, type UrlStateNotice } from '../../src/webhook/index.js'
import { createHttp1Transport } from '../../src/webhook/node-only.js'
import { startChaosSink } from '../helpers/chaos-sink.js'
import { freePort } from '../helpers/ports.js'
import { startSink, type Sink } from '../helpers/sink.js'

const EVENTS = 300
const SLOTS = 8
/** Longer than any wait below: a bad URL's attempt that the healthy one had to wait for would fail the test. */
const TIMEOUT_MS = 15_000

const open: Array<{ close(): Promise<void> }> = []
const destinations: WebhookDestination[] = []
afterEach(async () => {
  // The bad URLs' attempts may still be out: closing does not wait for them.
  await Promise.all(destinations.splice(0).map((destination) => destination.close({ timeout: 100 })))
  await Promise.all(open.splice(0).map((item) => item.close()))
})

async function healthy(): Promise<Sink> {
  const sink = await startSink(() => ({ status: 200 }))
  open.push(sink)
  return sink
}

/** The bad URLs: a black hole (accepts, never answers), a slow one, one refusing connections, a 503 storm. */
const BAD: Record<string, () => Promise<string>> = {
  'black-holed': async () => {
    const sink = await startChaosSink(() => ({ kind: 'hang' }))
    open.push(sink)
    return sink.url
  },
  'slow (answers after 12 s)': async () => {
    const sink = await startSink(() => ({ status: 200, delayMs: 12_000 }))
    open.push(sink)
    return sink.url
  },
  'refusing connections': async () => `http://127.0.0.1:${await freePort()}`,
  'answering 503': async () => {
    const sink = await startSink(() => ({ status: 503 }))
    open.push(sink)
    return sink.url
  },
}

function destinationOf(settings: ConstructorParameters<typeof WebhookDestination>[0]): WebhookDestination {
  const destination = new WebhookDestination({ timeoutMs: TIMEOUT_MS, maxConcurrencyPerUrl: SLOTS, ...settings })
  destinations.push(destination)
  return destination
}

const track = (index: number) => ({ type: 'track' as const, userId: 'u1', event: 'E', messageId: `evt-${index}` })

describe.each(Object.keys(BAD))('a %s URL beside a healthy one', (kind) => {
  it("mode 'each': the healthy URL gets every event, and the bad one holds only its own slots", async () => {
    const good = await healthy()
    const destination = destinationOf({
      webhooks: [{ url: await (BAD[kind] as () => Promise<string>)() }, { url: good.url }],
      mode: 'each',
      backoff: () => 60_000,
    })
    const answered: string[] = []
    destination.on('attempt', (notice) => answered.push(notice.url))
    for (let index = 0; index < EVENTS; index++) void destination.deliver(track(index))
    const healthyDone = () => {
      const fine = destination.backlog()[1]
      return good.requests.length === EVENTS && fine?.queued === 0 && fine.inFlight === 0 && fine.retrying === 0
    }
    await expect.poll(healthyDone, { timeout: TIMEOUT_MS - 3_000 }).toBe(true)
    const [bad] = destination.backlog()
    expect((bad?.queued ?? 0) + (bad?.retrying ?? 0) + (bad?.inFlight ?? 0)).toBe(EVENTS)
    expect(bad?.inFlight).toBeLessThanOrEqual(SLOTS)
    if (kind === 'black-holed' || kind.startsWith('slow')) {
      // Every healthy delivery came while the bad URL's first attempts were still out.
      expect(answered.filter((url) => url === bad?.url)).toEqual([])
      expect(bad?.inFlight).toBe(SLOTS)
    }
  })

  it("mode 'any': each event ends at the first 2xx, without waiting for the bad URL", async () => {
    const good = await healthy()
    const destination = destinationOf({
      webhooks: [{ url: await (BAD[kind] as () => Promise<string>)() }, { url: good.url }],
      backoff: () => 60_000,
    })
    const results: DeliveryResult[] = []
    for (let index = 0; index < EVENTS; index++) void destination.deliver(track(index)).then((r) => results.push(r))
    await expect.poll(() => results.length, { timeout: TIMEOUT_MS - 3_000 }).toBe(EVENTS)
    expect(results.every((result) => result.status === 'delivered')).toBe(true)
    expect(results.every((result) => result.urls[0]?.status === 'superseded')).toBe(true)
    expect(good.requests).toHaveLength(EVENTS)
    // Nothing waits for the bad URL any more: only attempts that were already out may still be.
    const [bad] = destination.backlog()
    expect(bad).toMatchObject({ queued: 0, retrying: 0 })
    expect(destination.pendingRetries).toBe(0)
  })
})

describe("a URL's backlog", () => {
  it('is bounded by maxPendingPerUrl: past it the event fails at that URL with ERR_BACKLOG_FULL, and goes on at the others', async () => {
    const good = await healthy()
    const destination = destinationOf({
      webhooks: [{ url: await (BAD['black-holed'] as () => Promise<string>)() }, { url: good.url }],
      mode: 'each',
      maxPendingPerUrl: 50,
    })
    const results: DeliveryResult[] = []
    // At the pace the healthy URL keeps up with (20 at a time): only the black hole's backlog grows.
    for (let index = 0; index < EVENTS; index++) {
      void destination.deliver(track(index)).then((r) => results.push(r))
      if (index % 20 === 19) await expect.poll(() => good.requests.length).toBe(index + 1)
    }
    // The black hole holds 50 (8 of them in flight); the 250 others end, failed there.
    await expect.poll(() => results.length, { timeout: TIMEOUT_MS - 3_000 }).toBe(EVENTS - 50)
    for (const result of results) {
      expect(result.status).toBe('failed')
      expect(result.urls[0]?.lastError?.code).toBe('ERR_BACKLOG_FULL')
      expect(result.urls[0]?.lastError?.message).toMatch(/maxPendingPerUrl/)
      expect(result.urls[1]).toMatchObject({ status: 'delivered', attempts: 1 })
    }
    expect(good.requests).toHaveLength(EVENTS)
    expect(destination.backlog()[0]).toMatchObject({ queued: 50 - SLOTS, inFlight: SLOTS })
  })
})

describe("a URL's circuit breaker", () => {
  it('opens after a run of failures, lets one probe through after the cool-down, and closes when the URL recovers', async () => {
    let recovered = false
    const storm = await startSink(() => ({ status: recovered ? 200 : 503 }))
    open.push(storm)
    const destination = destinationOf({
      webhooks: [{ url: storm.url }],
      backoff: () => 10,
      // One attempt at a time: none is still out when the breaker opens.
      maxConcurrencyPerUrl: 1,
      breaker: { failures: 3, coolDownMs: 300 },
    })
    const states: UrlStateNotice[] = []
    const next = (circuit: string) =>
      new Promise<void>((resolve) => {
        const listener = (notice: UrlStateNotice) => {
          if (notice.circuit !== circuit) return
          destination.off('url-state', listener)
          resolve()
        }
        destination.on('url-state', listener)
      })
    destination.on('url-state', (notice) => states.push(notice))
    const opened = next('open')
    const deliveries = Array.from({ length: 20 }, (_, index) => destination.deliver(track(index)))
    await opened
    expect(destination.backlog()[0]?.circuit).toBe('open')
    // While open, no attempt: the next request is the probe, after the cool-down.
    const sentWhenOpened = storm.requests.length
    const probing = next('half-open')
    const reopened = next('open')
    await probing
    await reopened
    expect(storm.requests.length).toBe(sentWhenOpened + 1)
    recovered = true
    const closed = next('closed')
    await closed
    const results = await Promise.all(deliveries)
    expect(results.every((result) => result.status === 'delivered')).toBe(true)
    expect(states.map((notice) => notice.circuit).slice(0, 4)).toEqual(['open', 'half-open', 'open', 'half-open'])
    expect(states.at(-1)).toEqual({ url: `${storm.url}/`, circuit: 'closed' })
  })

  it("fails events whose window ends while their URL's breaker is open with ERR_CIRCUIT_OPEN, the URL's last failure as cause, one never sent too", async () => {
    const storm = await startSink(() => ({ status: 503 }))
    open.push(storm)
    const destination = destinationOf({
      webhooks: [{ url: storm.url }],
      backoff: () => 10,
      retryWindowMs: 300,
      breaker: { failures: 1, coolDownMs: 60_000 },
    })
    const states: UrlStateNotice[] = []
    destination.on('url-state', (notice) => states.push(notice))
    const first = destination.deliver(track(1))
    await expect.poll(() => states.length).toBe(1)
    const never = await destination.deliver(track(2))
    const result = await first
    expect(result.status).toBe('failed')
    expect(result.urls[0]?.lastError).toMatchObject({ code: 'ERR_CIRCUIT_OPEN' })
    expect(result.urls[0]?.lastError?.cause).toMatchObject({ code: 'ERR_HTTP_STATUS', status: 503 })
    // Never sent: the URL's last failure is why.
    expect(never.status).toBe('failed')
    expect(never.urls[0]?.attempts).toBe(0)
    expect(never.urls[0]?.lastError).toMatchObject({ code: 'ERR_CIRCUIT_OPEN' })
    expect(never.urls[0]?.lastError?.message).toContain('HTTP 503')
    expect(never.urls[0]?.lastError?.cause).toMatchObject({ code: 'ERR_HTTP_STATUS', status: 503 })
    expect(storm.requests).toHaveLength(1)
  })

  it('is off with breaker: false: every retry is an attempt', async () => {
    const storm = await startSink(() => ({ status: 503 }))
    open.push(storm)
    const destination = destinationOf({
      webhooks: [{ url: storm.url }],
      backoff: () => 5,
      retryWindowMs: 400,
      breaker: false,
    })
    const result = await destination.deliver(track(1))
    expect(result.status).toBe('failed')
    expect(result.urls[0]?.lastError?.code).toBe('ERR_HTTP_STATUS')
    expect(storm.requests.length).toBeGreaterThan(10)
  })
})

describe('ratePerUrl', () => {
  it('sends at most a burst of one second and then the rate to each URL, whatever is queued', async () => {
    const limited = await healthy()
    const rate = 20
    const before = Date.now()
    const destination = destinationOf({ webhooks: [{ url: limited.url }], ratePerUrl: rate })
    const events = 50
    const results = await Promise.all(Array.from({ length: events }, (_, index) => destination.deliver(track(index))))
    expect(results.every((result) => result.status === 'delivered')).toBe(true)
    // Request k (0-based) past the first second's burst cannot leave before its token, counted
    // from the bucket's start (after `before`): a lower bound on time, which a slow machine can
    // only exceed. `at` is Date.now(), whole ms.
    limited.requests.forEach((request, k) => {
      const earliest = k < rate ? 0 : ((k - rate + 1) * 1000) / rate
      expect(request.at - before, `request ${k}`).toBeGreaterThanOrEqual(Math.floor(earliest) - 1)
    })
  })

  it('is refused unless it is a positive number', () => {
    for (const ratePerUrl of [0, -1, Number.NaN, '5']) {
      expect(
        () => new WebhookDestination({ webhooks: [{ url: 'https://x.test/' }], ratePerUrl: ratePerUrl as number }),
      ).toThrow(/ratePerUrl/)
    }
  })
})

describe('found by an attack from the packed tarball', () => {
  it('close() ends what waits behind an open breaker at once, and sends nothing to its URL afterwards', async () => {
    const hole = await startChaosSink(() => ({ kind: 'hang' }))
    open.push(hole)
    const destination = destinationOf({
      webhooks: [{ url: hole.url }],
      timeoutMs: 300,
      maxConcurrencyPerUrl: 4,
      breaker: { failures: 4, coolDownMs: 200 },
    })
    const opened = new Promise<void>((resolve) =>
      destination.on('url-state', (notice) => notice.circuit === 'open' && resolve()),
    )
    const deliveries = Array.from({ length: 50 }, (_, index) => destination.deliver(track(index)))
    await opened
    await destination.close({ timeout: 1_000 })
    const results = await Promise.all(deliveries)
    expect(results.every((result) => result.status === 'failed')).toBe(true)
    expect(results.filter((result) => result.urls[0]?.lastError?.code === 'ERR_CLOSED').length).toBeGreaterThan(40)
    expect(destination.backlog()[0]).toMatchObject({ queued: 0, retrying: 0 })
    expect(destination.pendingRetries).toBe(0)
    const sentAtClose = hole.requests
    // Two cool-downs later, no probe has gone out.
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(hole.requests).toBe(sentAtClose)
  })

  it('keeps a black-holed path from the connections of a healthy path on the same host and port', async () => {
    const server = createServer((request, response) => {
      request.resume()
      if (request.url === '/good') response.end()
    })
    const base = await new Promise<string>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
    )
    open.push({
      close: () => {
        server.closeAllConnections()
        return new Promise<void>((resolve) => server.close(() => resolve()))
      },
    })
    // One connection per URL: were they shared, /good would wait behind /bad's.
    const destination = destinationOf({
      webhooks: [{ url: `${base}/bad` }, { url: `${base}/good` }],
      mode: 'each',
      breaker: false,
      maxConcurrencyPerUrl: 1,
      transport: createHttp1Transport({ connections: 1 }),
    })
    const accepted: string[] = []
    destination.on('attempt', (notice) => notice.accepted && accepted.push(notice.eventId))
    for (let index = 0; index < 20; index++) void destination.deliver(track(index))
    await expect.poll(() => accepted.length, { timeout: TIMEOUT_MS - 3_000 }).toBe(20)
  })

  it('sends no attempt that waited for a slot past its window (and a second of grace)', async () => {
    const hole = await startChaosSink(() => ({ kind: 'hang' }))
    open.push(hole)
    const destination = destinationOf({
      webhooks: [{ url: hole.url }],
      breaker: false,
      maxConcurrencyPerUrl: 1,
      timeoutMs: 500,
      retryWindowMs: 700,
      backoff: () => 50,
    })
    const results = await Promise.all(Array.from({ length: 8 }, (_, index) => destination.deliver(track(index))))
    expect(results.every((result) => result.status === 'failed')).toBe(true)
    // Attempts every 500 ms, one at a time: those at 0, 500, 1,000 and 1,500 ms may start
    // (window 700 ms + 1,000 ms of grace); none later, whatever is still queued.
    expect(hole.requests).toBeLessThanOrEqual(4)
    expect(results.some((result) => result.urls[0]?.attempts === 0)).toBe(true)
    for (const result of results.filter((r) => r.urls[0]?.attempts === 0))
      expect(result.urls[0]?.lastError?.code).toBe('ERR_BACKLOG_FULL')
  })

  it("counts an attempt in flight when another URL accepts (mode 'any'): the receiver got it", async () => {
    const slow = await startSink(() => ({ status: 200, delayMs: 300 }))
    const fast = await healthy()
    open.push(slow)
    const destination = destinationOf({ webhooks: [{ url: slow.url }, { url: fast.url }] })
    const result = await destination.deliver(track(1))
    expect(result.urls).toMatchObject([
      { status: 'superseded', attempts: 1 },
      { status: 'delivered', attempts: 1 },
    ])
  })
})
