// The in-memory engine's lanes (one per URL), judged on the destination's public surface with a
// transport of the test's own: the test sees each request and answers it when it chooses, so a
// breaker's probe, a rate's queue and close() meet in a known order, without guessed delays.
import { afterEach, describe, expect, it } from 'vitest'
import {
  WebhookDestination,
  type AttemptNotice,
  type DeliveryResult,
  type WebhookRequest,
  type WebhookResponse,
  type WebhookTransport,
} from '../../src/webhook/index.js'

/** A request the test holds: `answer` ends it with a status. */
interface Held {
  readonly request: WebhookRequest
  answer(status: number): void
}

/** A transport that answers nothing by itself: every request waits in `held` for the test. */
function handTransport(): WebhookTransport & { held: Held[] } {
  const held: Held[] = []
  return {
    held,
    send: (request) =>
      new Promise<WebhookResponse>((resolve) => {
        held.push({ request, answer: (status) => resolve({ ok: true, status, retryAfter: null }) })
      }),
  }
}

const destinations: WebhookDestination[] = []
afterEach(async () => {
  await Promise.all(destinations.splice(0).map((destination) => destination.close({ timeout: 100 })))
})

function destinationOf(settings: ConstructorParameters<typeof WebhookDestination>[0]): WebhookDestination {
  const destination = new WebhookDestination(settings)
  destinations.push(destination)
  return destination
}

/** One hand-answered URL whose breaker opens at its first failure, for a minute unless told. */
function oneUrlBehindBreaker({
  coolDownMs = 60_000,
  ...settings
}: Omit<ConstructorParameters<typeof WebhookDestination>[0], 'webhooks' | 'transport' | 'breaker'> & {
  coolDownMs?: number
}) {
  const transport = handTransport()
  const destination = destinationOf({
    webhooks: [{ url: 'https://a.test/' }],
    transport,
    breaker: { failures: 1, coolDownMs },
    ...settings,
  })
  return { transport, destination }
}

const track = (index: number) => ({ type: 'track' as const, userId: `u${index}`, event: 'E' })
const liveTimers = () => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length

describe("an attempt's durationMs", () => {
  it('is the time from sending the request to its answer: no less than the transport held it, no more than the test waited', async () => {
    const holdMs = 40
    const transport: WebhookTransport = {
      send: () =>
        new Promise((resolve) => setTimeout(() => resolve({ ok: true, status: 200, retryAfter: null }), holdMs)),
    }
    const destination = destinationOf({ webhooks: [{ url: 'https://a.test/' }], transport })
    const notices: AttemptNotice[] = []
    destination.on('attempt', (notice) => notices.push(notice))
    const before = performance.now()
    const result = await destination.deliver(track(1))
    const waited = performance.now() - before
    expect(result.status).toBe('delivered')
    expect(notices).toHaveLength(1)
    // A timer may fire up to a millisecond early by performance.now().
    expect(notices[0]?.durationMs).toBeGreaterThanOrEqual(holdMs - 1)
    expect(notices[0]?.durationMs).toBeLessThanOrEqual(waited)
  })
})

describe('a delivery waiting for a slot of its URL', () => {
  it('is still sent when its window has ended less than a second before a slot frees', async () => {
    const transport = handTransport()
    const windowMs = 100
    const destination = destinationOf({
      webhooks: [{ url: 'https://a.test/' }],
      transport,
      maxConcurrencyPerUrl: 1,
      retryWindowMs: windowMs,
    })
    const started = performance.now()
    const first = destination.deliver(track(0))
    const second = destination.deliver(track(1))
    await expect.poll(() => transport.held.length).toBe(1)
    // The condition is time itself: the second event's window has ended while it waits.
    await expect.poll(() => performance.now() - started > windowMs * 2).toBe(true)
    transport.held[0]?.answer(200)
    await expect.poll(() => transport.held.length).toBe(2)
    transport.held[1]?.answer(200)
    expect((await first).status).toBe('delivered')
    expect((await second).urls[0]).toMatchObject({ status: 'delivered', attempts: 1 })
  })
})

describe("mode 'any'", () => {
  it('never sends a delivery queued at one URL once another URL accepted its event', async () => {
    const slow = handTransport()
    const destination = destinationOf({
      webhooks: [{ url: 'https://slow.test/' }, { url: 'https://fast.test/' }],
      maxConcurrencyPerUrl: 1,
      backoff: () => 60_000,
      transport: {
        // The fast URL accepts every event but the third (u2), which stays for the slow one.
        send: (request) =>
          request.url.startsWith('https://slow.test')
            ? slow.send(request)
            : Promise.resolve({
                ok: true,
                status: request.body.includes('"userId":"u2"') ? 503 : 200,
                retryAfter: null,
              }),
      },
    })
    const first = destination.deliver(track(0))
    const second = destination.deliver(track(1))
    const third = destination.deliver(track(2))
    // The second event waits at the slow URL behind the first, and the fast one accepts it.
    expect((await second).urls.map((url) => url.status)).toEqual(['superseded', 'delivered'])
    expect((await first).status).toBe('delivered')
    slow.held[0]?.answer(200)
    // Behind the first at the slow URL, the next request is the third event's, not the second's.
    await expect.poll(() => slow.held.length).toBe(2)
    expect(slow.held[1]?.request.body).toContain('"userId":"u2"')
    slow.held[1]?.answer(200)
    expect((await third).urls.map((url) => url.status)).toEqual(['delivered', 'superseded'])
  })
})

describe("a URL's breaker", () => {
  it('counts a 500 answer as a failure', async () => {
    const { transport, destination } = oneUrlBehindBreaker({ backoff: () => 60_000 })
    void destination.deliver(track(0))
    await expect.poll(() => transport.held.length).toBe(1)
    transport.held[0]?.answer(500)
    await expect.poll(() => destination.backlog()[0]?.circuit).toBe('open')
  })
})

describe('close()', () => {
  it('ends at once what is queued behind a rate, sends none of it, and leaves no timer', async () => {
    const transport = handTransport()
    const timersBefore = liveTimers()
    // One request every ten seconds: a burst of one, then the queue waits for the next token.
    const destination = destinationOf({ webhooks: [{ url: 'https://a.test/' }], transport, ratePerUrl: 0.1 })
    const results: DeliveryResult[] = []
    const deliveries = Array.from({ length: 3 }, (_, index) =>
      destination.deliver(track(index)).then((result) => results.push(result)),
    )
    await expect.poll(() => transport.held.length).toBe(1)
    expect(destination.backlog()[0]).toMatchObject({ queued: 2, inFlight: 1 })
    transport.held[0]?.answer(200)
    await expect.poll(() => results.length).toBe(1)
    // Long before close()'s deadline, which would end the queue anyway: the queue behind the rate
    // ends when close() begins.
    const closing = destination.close({ timeout: 10_000 })
    await expect.poll(() => results.length).toBe(3)
    await closing
    await Promise.all(deliveries)
    expect(results[0]?.status).toBe('delivered')
    for (const result of results.slice(1)) {
      expect(result.status).toBe('failed')
      expect(result.urls[0]).toMatchObject({ status: 'failed', attempts: 0 })
      expect(result.urls[0]?.lastError?.code).toBe('ERR_CLOSED')
    }
    expect(destination.backlog()[0]).toMatchObject({ queued: 0, retrying: 0, inFlight: 0 })
    // The lane's wait for its next token went with close(): nothing is left to fire.
    await expect.poll(liveTimers, { timeout: 3_000 }).toBe(timersBefore)
    expect(transport.held).toHaveLength(1)
  })

  it("ends at once what is queued behind a breaker's probe, and sends none of it when the probe succeeds", async () => {
    const coolDownMs = 50
    const { transport, destination } = oneUrlBehindBreaker({
      maxConcurrencyPerUrl: 4,
      backoff: () => 60_000,
      coolDownMs,
    })
    const states: string[] = []
    destination.on('url-state', (notice) => states.push(notice.circuit))
    const first = destination.deliver(track(0))
    await expect.poll(() => transport.held.length).toBe(1)
    transport.held[0]?.answer(503)
    await expect.poll(() => destination.backlog()[0]?.circuit).toBe('open')
    // Three events while the breaker is open: they wait for its cool-down, then one is the
    // probe and the two others stay queued for its answer.
    const later = [1, 2, 3].map((index) => destination.deliver(track(index)))
    await expect.poll(() => transport.held.length).toBe(2)
    await expect.poll(() => destination.backlog()[0]).toMatchObject({ circuit: 'half-open', queued: 2, inFlight: 1 })
    const probe = [1, 2, 3].findIndex((index) => transport.held[1]?.request.body.includes(`"userId":"u${index}"`))
    expect(probe).not.toBe(-1)
    const queued = later.filter((_, index) => index !== probe)
    const closing = destination.close({ timeout: 10_000 })
    // The two queued behind the probe end before the probe answers, long before close()'s deadline.
    let ended = 0
    for (const delivery of queued) void delivery.then(() => ended++)
    await expect.poll(() => ended).toBe(2)
    for (const result of await Promise.all(queued)) {
      expect(result.urls[0]).toMatchObject({ status: 'failed', attempts: 0 })
      expect(result.urls[0]?.lastError?.code).toBe('ERR_CLOSED')
    }
    transport.held[1]?.answer(200)
    await closing
    expect((await first).urls[0]?.lastError?.code).toBe('ERR_CLOSED')
    expect((await later[probe])?.status).toBe('delivered')
    expect(transport.held).toHaveLength(2)
    expect(states).toEqual(['open', 'half-open', 'closed'])
  })
})

/** The requests held for one URL, in the order sent. */
const heldAt = (transport: { held: Held[] }, origin: string) =>
  transport.held.filter((held) => held.request.url.startsWith(origin))

describe("a URL's breaker, closed again by a straggler's success", () => {
  it('lets deliveries through at once, new ones and retries, though its cool-down has not ended', async () => {
    const { transport, destination } = oneUrlBehindBreaker({ maxConcurrencyPerUrl: 2, backoff: () => 0 })
    const states: string[] = []
    destination.on('url-state', (notice) => states.push(notice.circuit))
    const first = destination.deliver(track(0))
    const second = destination.deliver(track(1))
    await expect.poll(() => transport.held.length).toBe(2)
    // The first answer opens the breaker for a minute; the second, out before it opened, closes it.
    transport.held[0]?.answer(503)
    transport.held[1]?.answer(200)
    expect((await second).status).toBe('delivered')
    expect(states).toEqual(['open', 'closed'])
    // The first event's retry (no backoff) goes at once, as does a new event.
    await expect.poll(() => transport.held.length).toBe(3)
    expect(transport.held[2]?.request.body).toContain('"userId":"u0"')
    expect(destination.backlog()[0]).toMatchObject({ queued: 0, retrying: 0, inFlight: 1 })
    const third = destination.deliver(track(2))
    await expect.poll(() => transport.held.length).toBe(4)
    transport.held[2]?.answer(200)
    transport.held[3]?.answer(200)
    expect((await first).urls[0]).toMatchObject({ status: 'delivered', attempts: 2 })
    expect((await third).urls[0]).toMatchObject({ status: 'delivered', attempts: 1 })
  })
})

describe('close(), then a breaker that opens', () => {
  it('ends at once what is queued behind it, sends none of it, and retries nothing, nor says it would', async () => {
    const { transport, destination } = oneUrlBehindBreaker({ maxConcurrencyPerUrl: 1, backoff: () => 0 })
    const retries: string[] = []
    destination.on('retry', (notice) => retries.push(notice.eventId))
    const first = destination.deliver(track(0))
    const second = destination.deliver(track(1))
    await expect.poll(() => transport.held.length).toBe(1)
    expect(destination.backlog()[0]).toMatchObject({ queued: 1, inFlight: 1 })
    // The breaker is closed: close() leaves the queued event to be sent once the slot frees.
    const closing = destination.close({ timeout: 5_000 })
    transport.held[0]?.answer(503)
    // The answer opens the breaker: what is queued ends now, and the failed URL is not retried.
    const both = Promise.all([first, second])
    let ended = false
    void both.then(() => (ended = true))
    await expect.poll(() => ended).toBe(true)
    const [one, two] = await both
    await closing
    expect(one?.urls[0]).toMatchObject({ status: 'failed', attempts: 1 })
    expect(one?.urls[0]?.lastError?.code).toBe('ERR_CLOSED')
    expect(one?.urls[0]?.lastError?.cause).toMatchObject({ code: 'ERR_HTTP_STATUS', status: 503 })
    expect(two?.urls[0]).toMatchObject({ status: 'failed', attempts: 0 })
    expect(two?.urls[0]?.lastError?.code).toBe('ERR_CLOSED')
    expect(retries).toEqual([])
    expect(transport.held).toHaveLength(1)
    expect(destination.backlog()[0]).toMatchObject({ queued: 0, retrying: 0, inFlight: 0, circuit: 'open' })
  })
})

describe("an event's attempts", () => {
  it.each([
    ['first', ['https://fast.test/', 'https://slow.test/'], [3, 2]],
    ['second', ['https://slow.test/', 'https://fast.test/'], [2, 3]],
  ])(
    'are the most any of its URLs made, whichever URL was tried last (the busiest URL %s)',
    async (_name, urls, each) => {
      const slow = handTransport()
      let sentToFast = 0
      const destination = destinationOf({
        webhooks: urls.map((url) => ({ url })),
        mode: 'each',
        backoff: () => 0,
        transport: {
          // The fast URL fails twice, then accepts; the slow one answers when the test says.
          send: (request) =>
            request.url.startsWith('https://slow.test')
              ? slow.send(request)
              : Promise.resolve({ ok: true, status: ++sentToFast < 3 ? 503 : 200, retryAfter: null }),
        },
      })
      const delivery = destination.deliver(track(0))
      await expect.poll(() => sentToFast).toBe(3)
      slow.held[0]?.answer(503)
      await expect.poll(() => slow.held.length).toBe(2)
      slow.held[1]?.answer(200)
      const result = await delivery
      expect(result.urls.map((url) => url.attempts)).toEqual(each)
      expect(result.attempts).toBe(3)
    },
  )
})

describe('maxConcurrency, shared by the URLs', () => {
  it('gives each URL at most its share (maxConcurrency ÷ URLs), even while the other URLs leave theirs free', async () => {
    const slow = handTransport()
    let sentToFast = 0
    const destination = destinationOf({
      webhooks: [{ url: 'https://slow.test/' }, { url: 'https://fast.test/' }],
      mode: 'each',
      maxConcurrency: 4,
      maxConcurrencyPerUrl: 64,
      transport: {
        send: (request) => {
          if (request.url.startsWith('https://slow.test')) return slow.send(request)
          sentToFast++
          return Promise.resolve({ ok: true, status: 200, retryAfter: null })
        },
      },
    })
    for (let index = 0; index < 5; index++) void destination.deliver(track(index))
    // The fast URL has taken every event: the slow one holds two requests (its half of four), not four.
    await expect.poll(() => sentToFast).toBe(5)
    expect(destination.backlog()[0]).toMatchObject({ queued: 3, inFlight: 2 })
    expect(slow.held).toHaveLength(2)
    expect(destination.backlog()[1]).toMatchObject({ queued: 0, inFlight: 0 })
  })
})

describe('a probe that is not sent', () => {
  it('is given back when its delivery waited past its window: the next delivery to the URL is the probe', async () => {
    const transport = handTransport()
    const windowMs = 100
    // Three URLs share two slots: a URL whose item is ready may wait for another URL's slot.
    const destination = destinationOf({
      webhooks: [{ url: 'https://a.test/' }, { url: 'https://b.test/' }, { url: 'https://c.test/' }],
      mode: 'each',
      transport,
      maxConcurrency: 2,
      retryWindowMs: windowMs,
      backoff: () => 0,
      breaker: { failures: 1, coolDownMs: 20 },
    })
    const states: string[] = []
    destination.on('url-state', (notice) => notice.url === 'https://a.test/' && states.push(notice.circuit))
    const first = destination.deliver(track(0))
    const added = performance.now()
    await expect.poll(() => transport.held.length).toBe(2)
    // A fails and its breaker opens; C takes the slot A gave up.
    heldAt(transport, 'https://a.test')[0]?.answer(503)
    await expect.poll(() => heldAt(transport, 'https://c.test').length).toBe(1)
    // After the cool-down, A's retry is ready, waiting for a slot that B and C hold.
    await expect.poll(() => destination.backlog()[0]).toMatchObject({ queued: 1, retrying: 0, circuit: 'open' })
    // The condition is time itself: the first event's window, and its grace, have ended.
    await expect.poll(() => performance.now() - added > windowMs + 1_000 + 2, { timeout: 5_000 }).toBe(true)
    // B's answer frees a slot: A's retry gets the probe, but is too late to be sent.
    heldAt(transport, 'https://b.test')[0]?.answer(200)
    await expect.poll(() => states).toEqual(['open', 'half-open'])
    expect(destination.backlog()[0]).toMatchObject({ queued: 0, inFlight: 0 })
    // The next event's request to A goes as the probe.
    void destination.deliver(track(1))
    await expect.poll(() => heldAt(transport, 'https://a.test').length).toBe(2)
    expect(heldAt(transport, 'https://a.test')[1]?.request.body).toContain('"userId":"u1"')
    heldAt(transport, 'https://c.test')[0]?.answer(200)
    const result = await first
    expect(result.urls.map((url) => url.status)).toEqual(['failed', 'delivered', 'delivered'])
    expect(result.urls[0]).toMatchObject({ attempts: 1, lastStatus: 503 })
  })
})

describe("mode 'any', once a URL accepts", () => {
  it('supersedes the URLs still pending, dropping one that waits for a retry at once; a URL failed for good stays failed', async () => {
    const accepting = handTransport()
    const destination = destinationOf({
      webhooks: [
        { url: 'https://refusing.test/' },
        { url: 'https://accepting.test/' },
        { url: 'https://failing.test/' },
      ],
      backoff: () => 60_000,
      transport: {
        send: (request) => {
          if (request.url.startsWith('https://accepting.test')) return accepting.send(request)
          const status = request.url.startsWith('https://refusing.test') ? 400 : 503
          return Promise.resolve({ ok: true, status, retryAfter: null })
        },
      },
    })
    const delivery = destination.deliver(track(0))
    await expect.poll(() => destination.pendingRetries).toBe(1)
    expect(destination.backlog()[2]).toMatchObject({ retrying: 1, inFlight: 0 })
    accepting.held[0]?.answer(200)
    const result = await delivery
    expect(result.status).toBe('delivered')
    expect(result.urls).toMatchObject([
      { status: 'failed', attempts: 1, lastStatus: 400 },
      { status: 'delivered', attempts: 1 },
      { status: 'superseded', attempts: 1 },
    ])
    // The retry it waited for is gone with it, not left to fall due.
    expect(destination.pendingRetries).toBe(0)
    for (const url of destination.backlog()) expect(url).toMatchObject({ queued: 0, retrying: 0, inFlight: 0 })
  })

  it('leaves a request in flight to finish in its lane, counted there until it answers, and reports nothing of it', async () => {
    const transport = handTransport()
    const destination = destinationOf({
      webhooks: [{ url: 'https://slow.test/' }, { url: 'https://fast.test/' }],
      transport,
    })
    const attempts: string[] = []
    destination.on('attempt', (notice) => attempts.push(notice.url))
    const delivery = destination.deliver(track(0))
    await expect.poll(() => transport.held.length).toBe(2)
    heldAt(transport, 'https://fast.test')[0]?.answer(200)
    expect((await delivery).urls).toMatchObject([
      { status: 'superseded', attempts: 1 },
      { status: 'delivered', attempts: 1 },
    ])
    expect(destination.backlog()[0]).toMatchObject({ queued: 0, retrying: 0, inFlight: 1 })
    heldAt(transport, 'https://slow.test')[0]?.answer(503)
    await expect.poll(() => destination.backlog()[0]?.inFlight).toBe(0)
    expect(destination.backlog()[0]).toMatchObject({ queued: 0, retrying: 0 })
    expect(destination.pendingRetries).toBe(0)
    expect(attempts).toEqual(['https://fast.test/'])
  })
})

describe("close(), with a URL's breaker open", () => {
  it('ends what is queued at that URL even once its cool-down is over, and lets no probe go', async () => {
    const transport = handTransport()
    const destination = destinationOf({
      webhooks: [{ url: 'https://a.test/' }, { url: 'https://b.test/' }, { url: 'https://c.test/' }],
      mode: 'each',
      transport,
      maxConcurrency: 2,
      backoff: () => 0,
      breaker: { failures: 1, coolDownMs: 20 },
    })
    const states: string[] = []
    destination.on('url-state', (notice) => notice.url === 'https://a.test/' && states.push(notice.circuit))
    const first = destination.deliver(track(0))
    await expect.poll(() => transport.held.length).toBe(2)
    heldAt(transport, 'https://a.test')[0]?.answer(503)
    await expect.poll(() => heldAt(transport, 'https://c.test').length).toBe(1)
    // A's retry is ready after the cool-down, waiting for a slot; its breaker has not let a probe through yet.
    await expect.poll(() => destination.backlog()[0]).toMatchObject({ queued: 1, retrying: 0, circuit: 'open' })
    const closing = destination.close({ timeout: 5_000 })
    expect(destination.backlog()[0]).toMatchObject({ queued: 0, retrying: 0 })
    heldAt(transport, 'https://b.test')[0]?.answer(200)
    heldAt(transport, 'https://c.test')[0]?.answer(200)
    await closing
    const result = await first
    expect(result.urls.map((url) => url.status)).toEqual(['failed', 'delivered', 'delivered'])
    expect(result.urls[0]).toMatchObject({ attempts: 1 })
    expect(result.urls[0]?.lastError?.code).toBe('ERR_CLOSED')
    expect(result.urls[0]?.lastError?.cause).toMatchObject({ code: 'ERR_HTTP_STATUS', status: 503 })
    expect(heldAt(transport, 'https://a.test')).toHaveLength(1)
    expect(states).toEqual(['open'])
  })
})

describe("a URL's breaker and its lane", () => {
  it('is not opened again by the failure of a request sent before it opened, while its probe is out', async () => {
    const { transport, destination } = oneUrlBehindBreaker({
      maxConcurrencyPerUrl: 3,
      backoff: () => 60_000,
      coolDownMs: 20,
    })
    const states: string[] = []
    destination.on('url-state', (notice) => states.push(notice.circuit))
    void destination.deliver(track(0))
    void destination.deliver(track(1))
    await expect.poll(() => transport.held.length).toBe(2)
    transport.held[0]?.answer(503)
    await expect.poll(() => states).toEqual(['open'])
    // An event while it is open waits for the cool-down, then goes as the probe.
    const probed = destination.deliver(track(2))
    await expect.poll(() => transport.held.length).toBe(3)
    expect(transport.held[2]?.request.body).toContain('"userId":"u2"')
    expect(states).toEqual(['open', 'half-open'])
    // The second request, out since before the opening, fails now: the probe is still the one that decides.
    transport.held[1]?.answer(503)
    await expect.poll(() => destination.backlog()[0]).toMatchObject({ inFlight: 1, retrying: 2 })
    expect(states).toEqual(['open', 'half-open'])
    transport.held[2]?.answer(200)
    expect((await probed).status).toBe('delivered')
    expect(states).toEqual(['open', 'half-open', 'closed'])
  })

  it('moves what is queued behind a rate to wait for the breaker when it opens', async () => {
    const { transport, destination } = oneUrlBehindBreaker({ ratePerUrl: 0.1, backoff: () => 60_000 })
    for (let index = 0; index < 3; index++) void destination.deliver(track(index))
    await expect.poll(() => transport.held.length).toBe(1)
    expect(destination.backlog()[0]).toMatchObject({ queued: 2, retrying: 0, inFlight: 1 })
    transport.held[0]?.answer(503)
    await expect.poll(() => destination.backlog()[0]?.circuit).toBe('open')
    // The failed URL waits for its retry, the two queued behind the rate for the breaker.
    expect(destination.backlog()[0]).toMatchObject({ queued: 0, retrying: 3, inFlight: 0 })
    expect(destination.pendingRetries).toBe(3)
    // An event that comes while it is open waits for it too, not for the rate.
    void destination.deliver(track(3))
    expect(destination.backlog()[0]).toMatchObject({ queued: 0, retrying: 4, inFlight: 0 })
  })

  it("reads 'closed' when the breaker is off", () => {
    const destination = destinationOf({
      webhooks: [{ url: 'https://a.test/' }],
      transport: handTransport(),
      breaker: false,
    })
    expect(destination.backlog()).toEqual([
      { url: 'https://a.test/', queued: 0, retrying: 0, inFlight: 0, circuit: 'closed' },
    ])
  })
})

describe("a URL's backlog bound", () => {
  it('counts the deliveries waiting for a retry: past maxPendingPerUrl a new event fails there with ERR_BACKLOG_FULL', async () => {
    const destination = destinationOf({
      webhooks: [{ url: 'https://a.test/' }],
      maxPendingPerUrl: 2,
      backoff: () => 60_000,
      breaker: false,
      transport: { send: () => Promise.resolve({ ok: true, status: 503, retryAfter: null }) },
    })
    void destination.deliver(track(0))
    void destination.deliver(track(1))
    await expect.poll(() => destination.backlog()[0]).toMatchObject({ queued: 0, retrying: 2, inFlight: 0 })
    let third: DeliveryResult | undefined
    void destination.deliver(track(2)).then((result) => (third = result))
    await expect.poll(() => third).toBeDefined()
    expect(third?.urls[0]).toMatchObject({ status: 'failed', attempts: 0 })
    expect(third?.urls[0]?.lastError?.code).toBe('ERR_BACKLOG_FULL')
  })
})

describe('URLs taking turns for maxConcurrency', () => {
  it('keeps each URL to its one slot however many events queue for it while it waits for its turn', async () => {
    const transport = handTransport()
    // Three URLs, two slots: each URL has one slot, and they take turns for the two.
    const destination = destinationOf({
      webhooks: [{ url: 'https://a.test/' }, { url: 'https://b.test/' }, { url: 'https://c.test/' }],
      mode: 'each',
      transport,
      maxConcurrency: 2,
    })
    for (let index = 0; index < 3; index++) void destination.deliver(track(index))
    await expect.poll(() => transport.held.length).toBe(2)
    heldAt(transport, 'https://a.test')[0]?.answer(200)
    // C, which waited for its turn with three events queued, sends one of them.
    await expect.poll(() => heldAt(transport, 'https://c.test').length).toBe(1)
    heldAt(transport, 'https://b.test')[0]?.answer(200)
    // The free slot goes to A, next in turn, not to a second request to C.
    await expect.poll(() => transport.held.length).toBe(4)
    expect(heldAt(transport, 'https://a.test')).toHaveLength(2)
    expect(heldAt(transport, 'https://c.test')).toHaveLength(1)
    expect(destination.backlog().map((url) => url.inFlight)).toEqual([1, 0, 1])
  })
})

describe("mode 'any', a URL whose queued deliveries were all superseded", () => {
  it('takes no probe for them: its breaker stays open until a delivery can go, which is then the probe', async () => {
    const transport = handTransport()
    const destination = destinationOf({
      webhooks: [{ url: 'https://flaky.test/' }, { url: 'https://ok.test/' }, { url: 'https://late.test/' }],
      transport,
      maxConcurrency: 2,
      backoff: () => 0,
      breaker: { failures: 1, coolDownMs: 20 },
    })
    const states: string[] = []
    destination.on('url-state', (notice) => notice.url === 'https://flaky.test/' && states.push(notice.circuit))
    const first = destination.deliver(track(0))
    await expect.poll(() => transport.held.length).toBe(2)
    heldAt(transport, 'https://flaky.test')[0]?.answer(503)
    await expect.poll(() => heldAt(transport, 'https://late.test').length).toBe(1)
    // After the cool-down the flaky URL's retry is ready, waiting for one of the two slots.
    await expect.poll(() => destination.backlog()[0]).toMatchObject({ queued: 1, circuit: 'open' })
    heldAt(transport, 'https://ok.test')[0]?.answer(200)
    expect((await first).urls.map((url) => url.status)).toEqual(['superseded', 'delivered', 'superseded'])
    expect(destination.backlog()[0]).toMatchObject({ queued: 0, retrying: 0, inFlight: 0, circuit: 'open' })
    expect(states).toEqual(['open'])
    void destination.deliver(track(1))
    await expect.poll(() => heldAt(transport, 'https://flaky.test').length).toBe(2)
    expect(heldAt(transport, 'https://flaky.test')[1]?.request.body).toContain('"userId":"u1"')
    expect(states).toEqual(['open', 'half-open'])
  })
})

describe('a retry listener that closes the destination', () => {
  it('ends the URL it was told of with ERR_CLOSED, its failure as the cause, and leaves nothing scheduled', async () => {
    const destination = destinationOf({
      webhooks: [{ url: 'https://a.test/' }],
      backoff: () => 60_000,
      transport: { send: () => Promise.resolve({ ok: true, status: 503, retryAfter: null }) },
    })
    let closing: Promise<void> | undefined
    destination.on('retry', () => {
      closing ??= destination.close({ timeout: 1_000 })
    })
    const result = await destination.deliver(track(0))
    expect(result.urls[0]).toMatchObject({ status: 'failed', attempts: 1 })
    expect(result.urls[0]?.lastError?.code).toBe('ERR_CLOSED')
    expect(result.urls[0]?.lastError?.cause).toMatchObject({ code: 'ERR_HTTP_STATUS', status: 503 })
    expect(destination.pendingRetries).toBe(0)
    await closing
  })
})

describe("an event's X-Signature", () => {
  it('stays with an event of several URLs while one URL waits for a retry and another is queued for a slot', async () => {
    const transport = handTransport()
    const destination = destinationOf({
      webhooks: [{ url: 'https://a.test/' }, { url: 'https://b.test/' }],
      transport,
      mode: 'each',
      sharedSecret: 's3cret',
      maxConcurrencyPerUrl: 1,
      backoff: () => 60_000,
    })
    const retried: string[] = []
    destination.on('retry', (notice) => retried.push(notice.url))
    const first = destination.deliver(track(1))
    const second = destination.deliver(track(2))
    // Each URL holds the first event; the second waits for a slot at each.
    await expect.poll(() => transport.held.length).toBe(2)
    const atA = (held: Held) => held.request.url === 'https://a.test/'
    transport.held.find(atA)?.answer(200)
    await expect.poll(() => transport.held.length).toBe(3)
    // The second event fails at A and waits for its retry, while it is still queued at B.
    transport.held.filter(atA)[1]?.answer(503)
    await expect.poll(() => retried).toEqual(['https://a.test/'])
    transport.held.find((held) => !atA(held))?.answer(200)
    await expect.poll(() => transport.held.length).toBe(4)
    const [, , , queuedAtB] = transport.held
    expect(queuedAtB?.request.url).toBe('https://b.test/')
    expect(queuedAtB?.request.headers['x-signature']).toMatch(/^[0-9a-f]{40}$/)
    expect(queuedAtB?.request.headers['x-signature']).toBe(transport.held[2]?.request.headers['x-signature'])
    queuedAtB?.answer(200)
    await destination.close({ timeout: 100 })
    expect((await first).status).toBe('delivered')
    expect((await second).urls.map((url) => url.status)).toEqual(['failed', 'delivered'])
  })
})
