import { afterEach, describe, expect, it, vi } from 'vitest'
// msw intercepts fetch, not undici's Pool: this suite runs the Client with fetch (web platform).
import { WebClient as Client } from '../helpers/builds.js'
import type { DeliveryError } from '../../src/index.js'
import { KEEPALIVE_BUDGET } from '../../src/client/page-exit.js'
import { MAX_STORED_CHARS, unsentStoreFor, type StorageArea } from '../../src/client/page-store.js'
import { BATCH_URL, ENDPOINT, useBatchEndpoint } from '../helpers/msw.js'
import { browserLikeHost, MemoryStorage } from '../helpers/browser-page.js'

const { captured, respond } = useBatchEndpoint()

afterEach(() => {
  vi.unstubAllGlobals()
})

const PREFIX = `eventwire:unsent:key@${BATCH_URL}:`
/** Every message kept for a write key (`key` unless said) at the test endpoint, across the pages that kept some. */
function keptIn(storage: StorageArea | undefined, writeKey = 'key'): Array<Record<string, unknown>> {
  if (!(storage instanceof MemoryStorage)) return []
  return [...storage.items]
    .filter(([key]) => key.startsWith(PREFIX.replace('key@', `${writeKey}@`)))
    .flatMap(([, value]) => JSON.parse(value) as Array<Record<string, unknown>>)
}

const bytesOf = (text: string) => new TextEncoder().encode(text).length
const ids = (requests: typeof captured) => requests.flatMap((request) => request.json.batch.map((m) => m['messageId']))
const pad = 'x'.repeat(1_000)
/** 150 messages of some 1,100 bytes: 165 KB, far past what keepalive requests may carry at once. */
function track150(client: Client, callback?: (error: unknown) => void) {
  for (let index = 0; index < 150; index++)
    client.track({ userId: 'u1', event: 'E', properties: { index, pad }, messageId: `m-${index}` }, callback)
}

describe('a client in a browser page', () => {
  it('sends every batch with keepalive, its body within the keepalive budget', async () => {
    browserLikeHost()
    const client = new Client('key', { endpoint: ENDPOINT, flushAt: 100 })
    track150(client)
    await client.flush()
    expect(ids(captured)).toHaveLength(150)
    for (const request of captured) {
      expect(request.keepalive).toBe(true)
      expect(bytesOf(request.body)).toBeLessThanOrEqual(KEEPALIVE_BUDGET)
    }
  })

  it('on pagehide, sends what the keepalive budget carries and keeps the rest for the next page, which sends it first', async () => {
    const page = browserLikeHost()
    const outcomes: unknown[] = []
    const leaving = new Client('key', { endpoint: ENDPOINT, flushAfter: 60_000, flushAt: 1_000 })
    track150(leaving, (error) => outcomes.push(error))
    page.leave()
    // What was not kept is in flight already (started during pagehide), within the budget in all:
    // the browser refuses keepalive bodies past it.
    const kept = keptIn(page.storage)
    expect(kept.length).toBeGreaterThan(0)
    expect(leaving.pending).toBe(150 - kept.length)
    await vi.waitFor(() => expect(outcomes).toHaveLength(150 - kept.length))
    expect(outcomes.every((outcome) => outcome === undefined)).toBe(true)
    expect(ids(captured)).toHaveLength(150 - kept.length)
    expect(captured.reduce((total, request) => total + bytesOf(request.body), 0)).toBeLessThanOrEqual(KEEPALIVE_BUDGET)
    expect(leaving.pending).toBe(0)

    const next = new Client('key', { endpoint: ENDPOINT })
    await next.flush()
    expect(ids(captured)).toEqual(Array.from({ length: 150 }, (_, index) => `m-${index}`))
    // Taken out of the storage: a third page sends nothing twice.
    expect(keptIn(page.storage)).toEqual([])
    // Their callbacks belonged to the page that left: never called, not even by the next page.
    expect(outcomes).toHaveLength(150 - kept.length)
  })

  it('sends kept messages exactly as they were serialized', async () => {
    const page = browserLikeHost()
    const leaving = new Client('key', { endpoint: ENDPOINT, flushAfter: 60_000, flushAt: 1_000 })
    track150(leaving)
    const queued = new Map<string, string>()
    leaving.on('sent', (info) => {
      for (const message of info.messages) queued.set(message.messageId, message.json)
    })
    page.leave()
    const stored = keptIn(page.storage)
    const next = new Client('key', { endpoint: ENDPOINT })
    const resent: string[] = []
    next.on('sent', (info) => resent.push(...info.messages.map((message) => message.json)))
    await next.flush()
    expect(resent).toEqual(stored.map((message) => JSON.stringify(message)))
    expect(resent[0]).toContain('"timestamp":')
  })

  it('on visibilitychange to hidden, sends within the budget at once and the rest as it frees up, keeping nothing', async () => {
    const page = browserLikeHost()
    // Answers wait until released: what was started on hiding stays in flight.
    let release!: () => void
    const released = new Promise<void>((resolve) => {
      release = resolve
    })
    respond.current = async () => {
      await released
      return Response.json({})
    }
    const client = new Client('key', { endpoint: ENDPOINT, flushAfter: 60_000, flushAt: 1_000 })
    track150(client)
    page.hide()
    expect(keptIn(page.storage)).toEqual([])
    const inFlight = () => captured.reduce((total, request) => total + bytesOf(request.body), 0)
    // Messages of some 1,100 bytes: the budget is full to within two of them.
    await vi.waitFor(() => expect(inFlight()).toBeGreaterThan(KEEPALIVE_BUDGET - 2_300))
    expect(inFlight()).toBeLessThanOrEqual(KEEPALIVE_BUDGET)
    expect(ids(captured).length).toBeLessThan(150)
    release()
    // Not flush(): hiding alone sends the rest as the budget frees up.
    await vi.waitFor(() => expect(client.pending).toBe(0))
    expect(new Set(ids(captured)).size).toBe(150)
  })

  it('sends a batch waiting for its retry at once when the page is left: no timer of the page fires after', async () => {
    const page = browserLikeHost()
    respond.current = (index) => (index === 0 ? new Response(null, { status: 503 }) : Response.json({}))
    // A retry an hour away: without the page leaving, nothing would be sent again in this test.
    const client = new Client('key', { endpoint: ENDPOINT, retry: { baseDelay: 3_600_000, maxDelay: 3_600_000 } })
    const delivered: unknown[] = []
    client.track({ userId: 'u1', event: 'E', messageId: 'retried' }, (error) => delivered.push(error))
    void client.flush()
    await vi.waitFor(() => expect(captured).toHaveLength(1))
    page.leave()
    await vi.waitFor(() => expect(delivered).toEqual([undefined]))
    expect(captured).toHaveLength(2)
    expect(captured[1]?.keepalive).toBe(true)
    expect(captured[1]?.body).toBe(captured[0]?.body)
  })

  it('keeps for the next page, not retries, a batch whose request fails as the page is left', async () => {
    // As a browser refuses a keepalive request past the quota that other requests of the page hold.
    const page = browserLikeHost()
    respond.current = (index) => (index === 0 ? Response.error() : Response.json({}))
    const leaving = new Client('key', { endpoint: ENDPOINT, flushAfter: 60_000, retry: { baseDelay: 1 } })
    const outcomes: unknown[] = []
    leaving.track({ userId: 'u1', event: 'E', messageId: 'refused' }, (error) => outcomes.push(error))
    page.leave()
    await vi.waitFor(() => expect(keptIn(page.storage).map((message) => message['messageId'])).toEqual(['refused']))
    // Not retried by the page that is going away, and no callback: the message left this client.
    expect(captured).toHaveLength(1)
    expect(leaving.pending).toBe(0)
    expect(outcomes).toEqual([])
    const next = new Client('key', { endpoint: ENDPOINT })
    await next.flush()
    expect(ids(captured.slice(1))).toEqual(['refused'])
  })

  it('takes kept messages back when the page returns from the back-forward cache', async () => {
    const page = browserLikeHost()
    const client = new Client('key', { endpoint: ENDPOINT, flushAfter: 60_000, flushAt: 1_000 })
    track150(client)
    page.leave()
    expect(keptIn(page.storage)).not.toEqual([])
    page.comeBack()
    await client.flush()
    expect(new Set(ids(captured)).size).toBe(150)
    expect(keptIn(page.storage)).toEqual([])
  })

  it('keeps one store per write key and endpoint', async () => {
    const page = browserLikeHost()
    const leaving = new Client('key', { endpoint: ENDPOINT, flushAfter: 60_000, flushAt: 1_000 })
    track150(leaving)
    page.leave()
    const before = captured.length
    const other = new Client('other-key', { endpoint: ENDPOINT })
    await other.flush()
    expect(captured).toHaveLength(before)
    expect(keptIn(page.storage)).not.toEqual([])
  })

  it('with storeOnPageHide: false keeps nothing: what the budget cannot carry fails with ERR_PAGE_LEFT', () => {
    const page = browserLikeHost()
    const client = new Client('key', {
      endpoint: ENDPOINT,
      flushAfter: 60_000,
      flushAt: 1_000,
      storeOnPageHide: false,
    })
    const errors: DeliveryError[] = []
    client.on('error', (error) => errors.push(error))
    track150(client)
    page.leave()
    expect(page.storage instanceof MemoryStorage && page.storage.items.size).toBe(0)
    // Told at once, while the page still runs script: in flight (keepalive) or reported, nothing else.
    expect(errors.map((error) => error.code)).toEqual(['ERR_PAGE_LEFT'])
    expect(errors[0]?.message).toContain('storeOnPageHide is false')
    expect(client.pending + (errors[0]?.messages.length ?? 0)).toBe(150)
  })

  it('reports what neither the budget nor the storage bound can take, with ERR_PAGE_LEFT', async () => {
    const page = browserLikeHost()
    const client = new Client('key', { endpoint: ENDPOINT, flushAfter: 60_000, flushAt: 10_000 })
    const errors: DeliveryError[] = []
    client.on('error', (error) => errors.push(error))
    // 1,100 messages of some 1,100 bytes: 1.2 MB, past the store's 1,000,000 characters.
    for (let index = 0; index < 1_100; index++)
      client.track({ userId: 'u1', event: 'E', properties: { index, pad }, messageId: `over-${index}` })
    page.leave()
    const kept = keptIn(page.storage)
    const lost = errors.flatMap((error) => error.messages.map((message) => message.messageId))
    expect(errors.map((error) => error.code)).toEqual(['ERR_PAGE_LEFT'])
    await vi.waitFor(() => expect(client.pending).toBe(0))
    // Each message exactly once: sent, kept or reported lost.
    // (Requests of earlier tests may still arrive: only this test's ids count.)
    const sent = ids(captured).filter((id) => String(id).startsWith('over-'))
    const all = [...sent, ...kept.map((message) => message['messageId']), ...lost]
    expect(all.sort()).toEqual(Array.from({ length: 1_100 }, (_, index) => `over-${index}`).sort())
    expect(kept.length).toBeGreaterThan(0)
    expect(lost.length).toBeGreaterThan(0)
  })

  it('puts back into the store what the next page cannot hold within its bounds', async () => {
    const page = browserLikeHost()
    const leaving = new Client('key', { endpoint: ENDPOINT, flushAfter: 60_000, flushAt: 1_000 })
    track150(leaving)
    page.leave()
    const kept = keptIn(page.storage).length
    const next = new Client('key', { endpoint: ENDPOINT, maxQueueSize: 50 })
    await next.flush()
    expect(keptIn(page.storage)).toHaveLength(kept - 50)
    const third = new Client('key', { endpoint: ENDPOINT })
    await third.flush()
    expect(new Set(ids(captured)).size).toBe(150)
    expect(keptIn(page.storage)).toEqual([])
  })

  it('works where localStorage is missing or throws (storage off, sandboxed frames)', async () => {
    for (const storage of ['none', 'throws'] as const) {
      const page = browserLikeHost('none')
      if (storage === 'throws') {
        Object.defineProperty(globalThis, 'localStorage', {
          configurable: true,
          get() {
            throw new DOMException('denied', 'SecurityError')
          },
        })
      }
      const client = new Client('key', { endpoint: ENDPOINT, flushAfter: 60_000, flushAt: 1_000 })
      const lost: string[] = []
      client.on('error', (error) => lost.push(...error.messages.map((message) => message.messageId)))
      track150(client)
      // No storage to keep the rest: what the budget carried is sent, the rest reported, nothing thrown.
      expect(() => page.leave()).not.toThrow()
      await client.flush()
      expect([...ids(captured), ...lost].sort()).toEqual(Array.from({ length: 150 }, (_, index) => `m-${index}`).sort())
      expect(lost.length).toBeGreaterThan(0)
      captured.length = 0
      vi.unstubAllGlobals()
      Reflect.deleteProperty(globalThis, 'localStorage')
    }
  })

  it('with flushOnPageHide: false sends as on servers: no keepalive, batches past 64 KB, nothing on pagehide', async () => {
    const page = browserLikeHost()
    const client = new Client('key', { endpoint: ENDPOINT, flushAfter: 60_000, flushAt: 150, flushOnPageHide: false })
    track150(client)
    await client.flush()
    expect(captured).toHaveLength(1)
    expect(captured[0]?.keepalive).toBe(false)
    expect(bytesOf(captured[0]?.body ?? '')).toBeGreaterThan(KEEPALIVE_BUDGET)
    const off = new Client('key', { endpoint: ENDPOINT, flushAfter: 60_000, flushOnPageHide: false })
    off.track({ userId: 'u1', event: 'E' })
    page.leave()
    expect(off.pending).toBe(1)
    await off.close()
  })

  it('stops listening after close()', async () => {
    const page = browserLikeHost()
    const closed = new Client('key', { endpoint: ENDPOINT, flushAfter: 60_000 })
    await closed.close()
    page.leave()
    page.hide()
    expect(captured).toHaveLength(0)
  })
})

describe('the store of unsent messages', () => {
  const record = (index: number, size = 10) => {
    const message = {
      type: 'track',
      event: 'E',
      userId: 'u1',
      messageId: `m-${index}`,
      timestamp: '2026-11-23T00:00:00.000Z',
      properties: { p: 'x'.repeat(size) },
    }
    return { type: 'track' as const, messageId: `m-${index}`, json: JSON.stringify(message) }
  }

  it('adds to what is kept, and stops at its size bound, saying how many it kept', () => {
    const storage = new MemoryStorage()
    const store = unsentStoreFor(BATCH_URL, 'key', storage)
    expect(store?.keep([record(1), record(2)])).toBe(2)
    expect(store?.keep([record(3)])).toBe(1)
    const big = Array.from({ length: 200 }, (_, index) => record(10 + index, 10_000))
    const kept = store?.keep(big) ?? 0
    expect(kept).toBeGreaterThan(0)
    expect(kept).toBeLessThan(200)
    const chars = [...storage.items.values()].reduce((sum, value) => sum + value.length, 0)
    expect(chars).toBeLessThanOrEqual(MAX_STORED_CHARS)
    expect(
      store
        ?.take()
        .map((one) => one.messageId)
        .slice(0, 3),
    ).toEqual(['m-1', 'm-2', 'm-3'])
    expect(store?.take()).toEqual([])
  })

  it('gives each page a key of its own: pages leaving at once cannot write over each other', () => {
    const storage = new MemoryStorage()
    // Two pages' stores, as two tabs have: neither reads, changes and writes back the other's key.
    const first = unsentStoreFor(BATCH_URL, 'key', storage)
    const second = unsentStoreFor(BATCH_URL, 'key', storage)
    first?.keep([record(1), record(2)])
    second?.keep([record(3)])
    first?.keep([record(4)])
    expect(storage.items.size).toBe(3)
    const next = unsentStoreFor(BATCH_URL, 'key', storage)
    expect(
      next
        ?.take()
        .map((one) => one.messageId)
        .sort(),
    ).toEqual(['m-1', 'm-2', 'm-3', 'm-4'])
    expect(storage.items.size).toBe(0)
  })

  it('takes nothing the client would not have sent: the storage is any script of the origin', () => {
    const storage = new MemoryStorage()
    const store = unsentStoreFor(BATCH_URL, 'key', storage)
    for (const garbage of ['not json', '{"an":"object"}', '"text"', 'null']) {
      storage.setItem(`${PREFIX}planted`, garbage)
      expect(store?.take()).toEqual([])
    }
    storage.setItem(
      `${PREFIX}planted`,
      JSON.stringify([
        { type: 'track', messageId: 'ok', event: 'E', userId: 'u1', timestamp: '2026-11-23T00:00:00.000Z' },
        { type: 'launch', messageId: 'bad-type' },
        { type: 'track', messageId: 'no-event', userId: 'u1' },
        { type: 'track', messageId: 'bad\r\nid', event: 'E', userId: 'u1' },
        { type: 'track', messageId: 'too-big', event: 'E', userId: 'u1', properties: { pad: 'x'.repeat(40_000) } },
        ['an', 'array'],
        null,
      ]),
    )
    const taken = store?.take() ?? []
    expect(taken.map((one) => one.messageId)).toEqual(['ok'])
    // Kept as it was made: the same id and time.
    expect(JSON.parse(taken[0]?.json ?? '{}')).toMatchObject({ messageId: 'ok', timestamp: '2026-11-23T00:00:00.000Z' })
  })

  it('keeps nothing when the storage refuses (quota exceeded)', () => {
    const storage = new MemoryStorage()
    storage.setItem = () => {
      throw new DOMException('full', 'QuotaExceededError')
    }
    expect(unsentStoreFor(BATCH_URL, 'key', storage)?.keep([record(1)])).toBe(0)
  })
})

describe('a large defaultContext in a page', () => {
  it('leaves room for a batch of one largest message within the keepalive budget: flush and close end', async () => {
    browserLikeHost()
    // The largest defaultContext beside the largest message: both bounds together fit in 64,000.
    const defaultContext = { blob: 'c'.repeat(15_980) }
    const client = new Client('key', { endpoint: ENDPOINT, flushAfter: 60_000, defaultContext })
    client.track({ userId: 'u1', event: 'Big', properties: { pad: 'p'.repeat(31_840) } })
    await client.flush()
    await client.close({ timeout: 1_000 })
    expect(captured).toHaveLength(1)
    expect(captured[0]?.keepalive).toBe(true)
    expect(new TextEncoder().encode(captured[0]?.body).length).toBeLessThanOrEqual(KEEPALIVE_BUDGET)
  })
})

describe('retries in a page that is hidden, shown and left', () => {
  /** A `fetch` that answers every request with `status` (and `headers`), counting them. */
  function answering(status: number, headers: Record<string, string> = {}) {
    const requests: string[] = []
    const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      requests.push(await new Request(input, init).text())
      return new Response(null, { status, headers })
    }) as typeof globalThis.fetch
    return { requests, fetch }
  }

  /** One turn of the event loop: an attempt over an in-process fetch has ended by then, and any it caused has started. */
  const turn = () => new Promise((resolve) => setTimeout(resolve, 0))

  it('switching tabs during an outage spends one early attempt per batch, however often the page is hidden', async () => {
    const page = browserLikeHost()
    const { requests, fetch } = answering(503)
    // Retries an hour apart: any attempt after the first is one the page's visibility caused.
    const client = new Client('key', { endpoint: ENDPOINT, fetch, retry: { baseDelay: 3_600_000 } })
    const errors: DeliveryError[] = []
    client.on('error', (error) => errors.push(error))
    client.track({ userId: 'u1', event: 'E' })
    void client.flush()
    await vi.waitFor(() => expect(requests).toHaveLength(1))
    for (let toggle = 0; toggle < 12; toggle++) {
      page.hide()
      await turn()
      page.show()
      await turn()
    }
    // The first hiding sent the waiting batch at once; the other eleven left it waiting.
    expect(requests).toHaveLength(2)
    await client.close({ timeout: 0 })
    expect(errors.map((error) => [error.code, error.attempts])).toEqual([['ERR_CLOSE_TIMEOUT', 2]])
  })

  it('never cuts a Retry-After wait short on hiding, and keeps the batch for the next page when the page is left during it', async () => {
    const page = browserLikeHost()
    const { requests, fetch } = answering(503, { 'retry-after': '3600' })
    const client = new Client('key', {
      endpoint: ENDPOINT,
      fetch,
      retry: { baseDelay: 1, maxRetryAfter: 3_600_000 },
    })
    const outcomes: unknown[] = []
    client.track({ userId: 'u1', event: 'E', messageId: 'asked-to-wait' }, (error) => outcomes.push(error))
    void client.flush()
    await vi.waitFor(() => expect(requests).toHaveLength(1))
    page.hide()
    await turn()
    expect(requests).toHaveLength(1)
    page.leave()
    await vi.waitFor(() =>
      expect(keptIn(page.storage).map((message) => message['messageId'])).toEqual(['asked-to-wait']),
    )
    expect(requests).toHaveLength(1)
    expect(outcomes).toEqual([])
    expect(client.pending).toBe(0)
  })

  it("keeps for the next page a batch waiting out another batch's 429 pause when the page is left", async () => {
    const page = browserLikeHost()
    const { requests, fetch } = answering(429, { 'retry-after': '3600' })
    const client = new Client('key', {
      endpoint: ENDPOINT,
      fetch,
      flushAt: 1,
      maxConcurrentRequests: 2,
      retry: { baseDelay: 1, maxRetryAfter: 3_600_000 },
    })
    const outcomes: unknown[] = []
    client.track({ userId: 'u1', event: 'E', messageId: 'answered-429' }, (error) => outcomes.push(error))
    await vi.waitFor(() => expect(requests).toHaveLength(1))
    await turn()
    // Sent while the endpoint asked for an hour's pause: it waits before its first attempt.
    client.track({ userId: 'u1', event: 'E', messageId: 'paused' }, (error) => outcomes.push(error))
    await turn()
    expect(requests).toHaveLength(1)
    page.leave()
    await vi.waitFor(() =>
      expect(
        keptIn(page.storage)
          .map((message) => message['messageId'])
          .sort(),
      ).toEqual(['answered-429', 'paused']),
    )
    expect(requests).toHaveLength(1)
    expect(outcomes).toEqual([])
    expect(client.pending).toBe(0)
  })

  it('after a back-forward cache round trip, runs the callbacks of the messages the page kept and sent again', async () => {
    const page = browserLikeHost()
    const client = new Client('key', { endpoint: ENDPOINT, flushAfter: 60_000, flushAt: 1_000 })
    const outcomes = new Map<string, unknown>()
    for (let index = 0; index < 150; index++) {
      const messageId = `m-${index}`
      client.track({ userId: 'u1', event: 'E', properties: { index, pad }, messageId }, (error, outcome) =>
        outcomes.set(messageId, error ?? outcome),
      )
    }
    page.leave()
    const kept = keptIn(page.storage).length
    expect(kept).toBeGreaterThan(0)
    page.comeBack()
    await client.flush()
    expect(new Set(ids(captured)).size).toBe(150)
    // Every message, sent as the page was left or kept and sent once it came back, heard 'sent'.
    expect(outcomes.size).toBe(150)
    expect([...outcomes.values()].every((outcome) => outcome === 'sent')).toBe(true)
  })
})
