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
    const transport = handTransport()
    const destination = destinationOf({
      webhooks: [{ url: 'https://a.test/' }],
      transport,
      backoff: () => 60_000,
      breaker: { failures: 1, coolDownMs: 60_000 },
    })
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
    await destination.close({ timeout: 1_000 })
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
    const transport = handTransport()
    const coolDownMs = 50
    const destination = destinationOf({
      webhooks: [{ url: 'https://a.test/' }],
      transport,
      maxConcurrencyPerUrl: 4,
      backoff: () => 60_000,
      breaker: { failures: 1, coolDownMs },
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
    const closing = destination.close({ timeout: 5_000 })
    // The two queued behind the probe end before the probe answers.
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
