import { afterEach, describe, expect, it, vi } from 'vitest'
// msw intercepts fetch, not undici's Pool: this suite runs the Client with fetch (web platform).
import { WebClient as Client } from '../helpers/builds.js'
import { KEEPALIVE_BUDGET } from '../../src/client/page-exit.js'
import { MAX_STORED_CHARS, unsentStoreFor, type StorageArea } from '../../src/client/page-store.js'
import { BATCH_URL, ENDPOINT, useBatchEndpoint } from '../helpers/msw.js'

const { captured, respond } = useBatchEndpoint()

/** A Storage stand-in over a Map: what `localStorage` is to the client. */
class MemoryStorage implements StorageArea {
  readonly items = new Map<string, string>()
  getItem(key: string): string | null {
    return this.items.get(key) ?? null
  }
  setItem(key: string, value: string): void {
    this.items.set(key, value)
  }
  removeItem(key: string): void {
    this.items.delete(key)
  }
}

/**
 * A browser-like host: a document, `localStorage` and a real EventTarget for window events. (The
 * real browser runs are in test/runtimes: Chromium navigating away from a page.)
 */
function browserLikeHost(given: StorageArea | 'none' = new MemoryStorage()) {
  const storage = given === 'none' ? undefined : given
  const window = new EventTarget()
  const document = { visibilityState: 'visible' }
  vi.stubGlobal('document', document)
  vi.stubGlobal('localStorage', storage)
  vi.stubGlobal('addEventListener', window.addEventListener.bind(window))
  vi.stubGlobal('removeEventListener', window.removeEventListener.bind(window))
  return {
    storage,
    hide() {
      document.visibilityState = 'hidden'
      window.dispatchEvent(new Event('visibilitychange'))
    },
    leave: () => window.dispatchEvent(new Event('pagehide')),
    comeBack: () => window.dispatchEvent(Object.assign(new Event('pageshow'), { persisted: true })),
  }
}

afterEach(() => {
  vi.unstubAllGlobals()
})

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
    const kept = JSON.parse(page.storage?.getItem(`eventwire:unsent:key@${BATCH_URL}`) ?? '[]')
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
    expect(page.storage?.getItem(`eventwire:unsent:key@${BATCH_URL}`)).toBeNull()
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
    const stored = JSON.parse(page.storage?.getItem(`eventwire:unsent:key@${BATCH_URL}`) ?? '[]') as object[]
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
    expect(page.storage?.getItem(`eventwire:unsent:key@${BATCH_URL}`)).toBeNull()
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

  it('takes kept messages back when the page returns from the back-forward cache', async () => {
    const page = browserLikeHost()
    const client = new Client('key', { endpoint: ENDPOINT, flushAfter: 60_000, flushAt: 1_000 })
    track150(client)
    page.leave()
    expect(page.storage?.getItem(`eventwire:unsent:key@${BATCH_URL}`)).not.toBeNull()
    page.comeBack()
    await client.flush()
    expect(new Set(ids(captured)).size).toBe(150)
    expect(page.storage?.getItem(`eventwire:unsent:key@${BATCH_URL}`)).toBeNull()
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
    expect(page.storage?.getItem(`eventwire:unsent:key@${BATCH_URL}`)).not.toBeNull()
  })

  it('with storeOnPageHide: false keeps nothing: what the budget cannot carry stays queued', () => {
    const page = browserLikeHost()
    const client = new Client('key', {
      endpoint: ENDPOINT,
      flushAfter: 60_000,
      flushAt: 1_000,
      storeOnPageHide: false,
    })
    track150(client)
    page.leave()
    expect(page.storage instanceof MemoryStorage && page.storage.items.size).toBe(0)
    expect(client.pending).toBe(150)
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
      track150(client)
      page.leave()
      await client.flush()
      expect(new Set(ids(captured)).size).toBe(150)
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
    expect(storage.getItem(`eventwire:unsent:key@${BATCH_URL}`)?.length).toBeLessThanOrEqual(MAX_STORED_CHARS)
    expect(
      store
        ?.take()
        .map((one) => one.messageId)
        .slice(0, 3),
    ).toEqual(['m-1', 'm-2', 'm-3'])
    expect(store?.take()).toEqual([])
  })

  it('takes nothing that is not a message it could have kept: the storage is any script of the origin', () => {
    const storage = new MemoryStorage()
    const key = `eventwire:unsent:key@${BATCH_URL}`
    const store = unsentStoreFor(BATCH_URL, 'key', storage)
    for (const garbage of ['not json', '{"an":"object"}', '"text"', 'null']) {
      storage.setItem(key, garbage)
      expect(store?.take()).toEqual([])
    }
    storage.setItem(
      key,
      JSON.stringify([
        { type: 'track', messageId: 'ok', event: 'E', userId: 'u1' },
        { type: 'launch', messageId: 'bad-type' },
        { type: 'track' },
        { type: 'track', messageId: 'too-big', pad: 'x'.repeat(40_000) },
        ['an', 'array'],
        null,
      ]),
    )
    expect(store?.take().map((one) => one.messageId)).toEqual(['ok'])
  })

  it('keeps nothing when the storage refuses (quota exceeded)', () => {
    const storage = new MemoryStorage()
    storage.setItem = () => {
      throw new DOMException('full', 'QuotaExceededError')
    }
    expect(unsentStoreFor(BATCH_URL, 'key', storage)?.keep([record(1)])).toBe(0)
  })
})
