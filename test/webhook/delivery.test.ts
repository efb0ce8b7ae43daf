import { createHmac } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { defaultPlatform as webPlatform } from '../../src/webhook/platform/web.js'
import {
  toWebhookPayload,
  USER_AGENT,
  WebhookDestination,
  type AttemptNotice,
  type DeliveryResult,
  type RetryNotice,
  type WebhookEvent,
  type WebhookSettings,
} from '../../src/webhook/index.js'
import { monotonicNow } from '../../src/core/clock.js'
import { WebhookDestinationBase } from '../../src/webhook/delivery/destination-base.js'
import { freePort } from '../helpers/ports.js'
import { startSink, type Responder, type Sink } from '../helpers/sink.js'

const sinks: Sink[] = []
const destinations: WebhookDestinationBase[] = []
afterEach(async () => {
  await Promise.all(destinations.splice(0).map((destination) => destination.close({ timeout: 1_000 })))
  await Promise.all(sinks.splice(0).map((sink) => sink.close()))
})

async function receiver(respond?: Responder): Promise<Sink> {
  const sink = await startSink(respond)
  sinks.push(sink)
  return sink
}

const track: WebhookEvent = {
  type: 'track',
  userId: 'u1',
  event: 'Paid',
  properties: { amount: 5, note: 'Café ☕' },
  timestamp: '2024-01-02T03:04:05.006Z',
}

describe.each<[string, (settings: WebhookSettings) => WebhookDestinationBase]>([
  ['the Node platform (undici Pool, node:crypto)', (settings) => new WebhookDestination(settings)],
  ['the web platform (fetch, Web Crypto)', (settings) => new WebhookDestinationBase(settings, webPlatform)],
])('delivery with %s', (_name, build) => {
  function destination(settings: WebhookSettings): WebhookDestinationBase {
    const created = build({ backoff: () => 20, ...settings })
    destinations.push(created)
    return created
  }

  it('POSTs the payload once per URL with its own headers, static headers and an X-Signature over the exact bytes', async () => {
    const a = await receiver()
    const b = await receiver()
    const result = await destination({
      webhooks: [{ url: `${a.url}/in?source=1`, headers: { 'X-Team': 'data' } }, { url: `${b.url}/other` }],
      sharedSecret: 's3cret',
      mode: 'each',
    }).deliver(track)
    expect(result.status).toBe('delivered')
    const expectedBody = JSON.stringify(toWebhookPayload(track))
    for (const [sink, path] of [
      [a, '/in?source=1'],
      [b, '/other'],
    ] as const) {
      expect(sink.requests).toHaveLength(1)
      const [request] = sink.requests
      expect(request?.method).toBe('POST')
      expect(request?.path).toBe(path)
      expect(request?.headers['content-type']).toBe('application/json')
      expect(request?.headers['user-agent']).toBe(USER_AGENT)
      expect(request?.headers['user-agent']).toMatch(/\/1\.0$/)
      expect(request?.body).toBe(expectedBody)
      expect(request?.headers['x-signature']).toBe(
        createHmac('sha1', 's3cret')
          .update(request?.raw ?? '')
          .digest('hex'),
      )
    }
    expect(a.requests[0]?.headers['x-team']).toBe('data')
    expect(a.requests[0]?.headers['webhook-id']).toBe(result.eventId)
    expect(b.requests[0]?.headers['x-team']).toBeUndefined()
  })

  it('sends no X-Signature when no secret is set', async () => {
    const sink = await receiver()
    await destination({ webhooks: [{ url: sink.url }] }).deliver(track)
    expect(sink.requests[0]?.headers).not.toHaveProperty('x-signature')
  })

  it('retries a 500 later, signed as the first attempt was, then reports delivered with the attempts', async () => {
    const sink = await receiver((_request, index) => ({ status: index < 2 ? 500 : 204 }))
    const hub = destination({ webhooks: [{ url: sink.url }], sharedSecret: 's3cret' })
    const retries: RetryNotice[] = []
    hub.on('retry', (notice) => retries.push(notice))
    const result = await hub.deliver(track)
    expect(result).toMatchObject({
      status: 'delivered',
      attempts: 3,
      urls: [{ status: 'delivered', attempts: 3, lastStatus: 204 }],
    })
    expect(sink.requests).toHaveLength(3)
    expect(new Set(sink.requests.map((request) => request.body)).size).toBe(1)
    // A waiting event lets its signature go and has it made again when due: the same value.
    const signature = createHmac('sha1', 's3cret')
      .update(sink.requests[0]?.raw ?? '')
      .digest('hex')
    expect(sink.requests.map((request) => request.headers['x-signature'])).toEqual([signature, signature, signature])
    expect(result.eventId).toMatch(/^[0-9a-f-]{36}$/)
    expect(sink.requests.map((request) => request.headers['webhook-id'])).toEqual([
      result.eventId,
      result.eventId,
      result.eventId,
    ])
    expect(retries.map((notice) => [notice.attempts, notice.error.code, notice.error.status])).toEqual([
      [1, 'ERR_HTTP_STATUS', 500],
      [2, 'ERR_HTTP_STATUS', 500],
    ])
  })

  it("emits 'attempt' after each request to each URL, with the answer or the error", async () => {
    const flaky = await receiver((_request, index) => ({ status: index === 0 ? 503 : 200 }))
    const port = await freePort()
    const hub = destination({
      webhooks: [{ url: flaky.url }, { url: `http://127.0.0.1:${port}/down` }],
      mode: 'each',
      retryWindowMs: 150,
    })
    const attempts: AttemptNotice[] = []
    hub.on('attempt', (notice) => attempts.push(notice))
    const result = await hub.deliver(track)
    const seen = attempts.map((notice) => [
      notice.url.endsWith('/down') ? 'down' : 'flaky',
      notice.attempts,
      notice.accepted,
      notice.status,
      notice.error?.code,
    ])
    expect(seen.filter(([url]) => url === 'flaky')).toEqual([
      ['flaky', 1, false, 503, 'ERR_HTTP_STATUS'],
      ['flaky', 2, true, 200, undefined],
    ])
    const down = seen.filter(([url]) => url === 'down')
    expect(down.length).toBe(result.urls[1]?.attempts)
    expect(
      down.every(
        ([, , accepted, status, code]) => accepted === false && status === undefined && code === 'ERR_NETWORK',
      ),
    ).toBe(true)
    expect(attempts.every((notice) => notice.eventId === result.eventId)).toBe(true)
  })

  it.each([400, 401, 404, 410, 422])('does not retry HTTP %i', async (status) => {
    const sink = await receiver(() => ({ status }))
    const hub = destination({ webhooks: [{ url: sink.url }] })
    const failed: DeliveryResult[] = []
    hub.on('failed', (result) => failed.push(result))
    const result = await hub.deliver(track)
    expect(sink.requests).toHaveLength(1)
    expect(result).toMatchObject({ status: 'failed', urls: [{ status: 'failed', attempts: 1, lastStatus: status }] })
    expect(result.urls[0]?.lastError).toMatchObject({ code: 'ERR_HTTP_STATUS', status })
    expect(failed).toEqual([result])
  })

  it('does not follow redirects', async () => {
    const target = await receiver()
    const redirecting = await receiver(() => ({ status: 307, headers: { location: target.url } }))
    const result = await destination({ webhooks: [{ url: redirecting.url }] }).deliver(track)
    expect(result).toMatchObject({ status: 'failed', urls: [{ status: 'failed', attempts: 1 }] })
    expect(target.requests).toHaveLength(0)
  })

  it('retries a receiver that does not answer within the timeout (ERR_TIMEOUT)', async () => {
    const sink = await receiver((_request, index) => ({ status: 200, delayMs: index === 0 ? 1_500 : 0 }))
    const hub = destination({ webhooks: [{ url: sink.url }], timeoutMs: 200 })
    const codes: string[] = []
    hub.on('retry', (notice) => codes.push(notice.error.code))
    const result = await hub.deliver(track)
    expect(codes).toEqual(['ERR_TIMEOUT'])
    expect(result).toMatchObject({ status: 'delivered', urls: [{ attempts: 2 }] })
  })

  it('retries a refused connection (ERR_NETWORK)', async () => {
    const port = await freePort()
    const result = await destination({ webhooks: [{ url: `http://127.0.0.1:${port}/` }], retryWindowMs: 100 }).deliver(
      track,
    )
    expect(result.status).toBe('failed')
    expect(result.urls[0]?.attempts).toBeGreaterThan(1)
    expect(result.urls[0]?.lastError?.code).toBe('ERR_NETWORK')
  })

  it.each([429, 408, 503])('honours Retry-After on %i', async (status) => {
    const sink = await receiver((_request, index) =>
      index === 0 ? { status, headers: { 'retry-after': '1' } } : { status: 200 },
    )
    const result = await destination({ webhooks: [{ url: sink.url }] }).deliver(track)
    expect(result.status).toBe('delivered')
    expect((sink.requests[1]?.at ?? 0) - (sink.requests[0]?.at ?? 0)).toBeGreaterThanOrEqual(950)
  })

  it('counts the event processed when any one URL succeeds, and retries none of the others (mode any, the default)', async () => {
    const failing = await receiver(() => ({ status: 500 }))
    const working = await receiver()
    // A short backoff: a retry of the failing URL that was not cancelled would be sent within the wait below.
    const hub = destination({ webhooks: [{ url: failing.url }, { url: working.url }], backoff: () => 20 })
    const retries: RetryNotice[] = []
    hub.on('retry', (notice) => retries.push(notice))
    const result = await hub.deliver(track)
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(result.status).toBe('delivered')
    expect(result.urls.map((url) => url.status)).toEqual(['superseded', 'delivered'])
    expect(failing.requests).toHaveLength(1)
    expect(working.requests).toHaveLength(1)
    // Each URL runs on its own timeline: the failing one's retry may have been told before the
    // other accepted; it is cancelled then, and never sent.
    expect(retries.every((notice) => notice.url === `${failing.url}/`)).toBe(true)
    expect(hub.pendingRetries).toBe(0)
    expect(hub.backlog().map((url) => url.queued + url.retrying + url.inFlight)).toEqual([0, 0])
  })

  it('retries only the URLs that can still succeed while none has', async () => {
    const gone = await receiver(() => ({ status: 410 }))
    const flaky = await receiver((_request, index) => ({ status: index === 0 ? 503 : 200 }))
    const result = await destination({ webhooks: [{ url: gone.url }, { url: flaky.url }] }).deliver(track)
    expect(result.status).toBe('delivered')
    expect(result.urls.map((url) => [url.status, url.attempts])).toEqual([
      ['failed', 1],
      ['delivered', 2],
    ])
    expect(gone.requests).toHaveLength(1)
  })

  it("retries each URL on its own in mode 'each'", async () => {
    const fine = await receiver()
    const flaky = await receiver((_request, index) => ({ status: index < 2 ? 502 : 200 }))
    const result = await destination({ webhooks: [{ url: fine.url }, { url: flaky.url }], mode: 'each' }).deliver(track)
    expect(result.status).toBe('delivered')
    expect(fine.requests).toHaveLength(1)
    expect(flaky.requests).toHaveLength(3)
  })

  it('starts no attempt later than retryWindowMs after the first, then fails with the last error', async () => {
    // Arrivals are read on the engine's clock (monotonicNow): Date.now drifts from it by a few ms
    // over a long run, enough to put a retry at the window's end "after" it (seen on CI).
    const arrivals: number[] = []
    const sink = await receiver(() => {
      arrivals.push(monotonicNow())
      return { status: 500 }
    })
    // Rounds 300 ms apart in a 400 ms window: a retry that would fall after the window's end is moved
    // to its end, and none is scheduled past it. Judged on the times the engine schedules, which a
    // loaded machine cannot shift (it can only make a round late, and a late round past the end is the last).
    const hub = destination({ webhooks: [{ url: sink.url }], retryWindowMs: 400, backoff: () => 300 })
    const retryAts: number[] = []
    hub.on('retry', (notice) => retryAts.push(notice.retryAt))
    const before = monotonicNow()
    const result = await hub.deliver(track)
    expect(result.status).toBe('failed')
    expect(result.urls[0]?.lastError).toMatchObject({ code: 'ERR_HTTP_STATUS', status: 500 })
    expect(sink.requests).toHaveLength(retryAts.length + 1)
    expect(retryAts.length).toBeGreaterThanOrEqual(1)
    const first = arrivals[0] ?? 0
    for (const retryAt of retryAts) expect(retryAt).toBeLessThanOrEqual(first + 400)
    // A second retry can only be the one moved to the window's end: 300 ms after the second round would be past it.
    if (retryAts.length > 1) expect(retryAts.at(-1)).toBeGreaterThanOrEqual(before + 400)
    expect(retryAts.length).toBeLessThanOrEqual(2)
  })

  it('skips an event whose integrations turn Webhooks off, sending nothing', async () => {
    const sink = await receiver()
    const hub = destination({ webhooks: [{ url: sink.url }] })
    const skipped = await hub.deliver({ ...track, integrations: { All: false } } as WebhookEvent)
    const alsoSkipped = await hub.deliver({ ...track, integrations: { Webhooks: false } } as WebhookEvent)
    const sent = await hub.deliver({ ...track, integrations: { All: false, Webhooks: true } } as WebhookEvent)
    expect([skipped.status, alsoSkipped.status, sent.status]).toEqual(['skipped', 'skipped', 'delivered'])
    expect(skipped.urls[0]?.status).toBe('skipped')
    expect(sink.requests).toHaveLength(1)
  })

  it('delivers every payload type, alias with its spaced keys and delete in its short shape', async () => {
    const sink = await receiver()
    const hub = destination({ webhooks: [{ url: sink.url }] })
    await hub.deliver({ type: 'alias', previousId: 'anon-1', userId: 'u1' })
    await hub.deliver({ type: 'delete', userId: 'u1' })
    const [alias, deletion] = sink.requests.map((request) => JSON.parse(request.body) as Record<string, unknown>)
    expect(alias).toMatchObject({ version: 1, type: 'alias', 'Previous ID': 'anon-1', 'User ID': 'u1' })
    expect(alias).not.toHaveProperty('userId')
    expect(Object.keys(deletion ?? {}).sort()).toEqual(['timestamp', 'type', 'userId'])
  })
})

describe('backoff', () => {
  it('gets each URL its own retry count from 0, and waits what it returns', async () => {
    // Per URL: how many attempts fail before one is answered 200.
    const failuresBefore: Record<string, number> = { 'http://127.0.0.1:9/a': 3, 'http://127.0.0.1:9/b': 1 }
    const sent: Record<string, number> = {}
    const asked: number[] = []
    const destination = new WebhookDestination({
      webhooks: Object.keys(failuresBefore).map((url) => ({ url })),
      mode: 'each',
      backoff: (attempt) => {
        asked.push(attempt)
        return 1
      },
      transport: {
        send: async (request) => {
          sent[request.url] = (sent[request.url] ?? 0) + 1
          const failing = (sent[request.url] as number) <= (failuresBefore[request.url] as number)
          return { ok: true, status: failing ? 500 : 200, retryAfter: null }
        },
      },
    })
    destinations.push(destination)
    const result = await destination.deliver({ type: 'track', userId: 'u1', event: 'E' })
    expect(result.status).toBe('delivered')
    expect(result.urls.map((url) => url.attempts)).toEqual([4, 2])
    expect(result.attempts).toBe(4)
    expect([...asked].sort()).toEqual([0, 0, 1, 2])
  })
})
