import { afterEach, describe, expect, it, vi } from 'vitest'
import { gunzipSync } from 'node:zlib'
import { ClientBase } from '../../src/client/client-base.js'
import { createFetchTransport } from '../../src/client/fetch-transport.js'
import { KEEPALIVE_BUDGET } from '../../src/client/page-exit.js'
import { webGzip } from '../../src/core/gzip.js'
import type { Gzip } from '../../src/core/gzip.js'
import { MAX_BATCH_BYTES } from '../../src/core/limits.js'
import type { ClientOptions } from '../../src/index.js'
import { CLIENT_BUILDS } from '../helpers/builds.js'
import { startDev, type CliProcess } from '../helpers/cli.js'
import { useSinks, type ReceivedRequest } from '../helpers/sink.js'
import { browserLikeHost } from '../helpers/browser-page.js'

const sink = useSinks()

/** The client browsers get: `fetch` itself and `CompressionStream` (platform/browser.ts). */
class BrowserClient extends ClientBase {
  /** @param gzip - `null`: a runtime without `CompressionStream`. */
  constructor(writeKey: string, options: ClientOptions = {}, gzip: Gzip | null = webGzip ?? null) {
    super(writeKey, options, createFetchTransport, gzip ?? undefined)
  }
}

const BUILDS = [...CLIENT_BUILDS, ['browser platform (fetch, CompressionStream)', BrowserClient]] as const

/** What a request carried as JSON: its body, inflated when it came gzipped. */
function jsonOf(request: ReceivedRequest): string {
  return request.headers['content-encoding'] === 'gzip' ? gunzipSync(request.raw).toString('utf8') : request.body
}

/** A batch body without what differs between two clients sending the same calls: the batch's id and time. */
const withoutBatchStamp = (json: string) =>
  json.replace(/"messageId":"[^"]+","sentAt":"[^"]+"}$/, '"messageId":"-","sentAt":"-"}')

/** Twenty calls whose messages are the same bytes whichever client makes them. */
function track20(client: { track: ClientBase['track'] }) {
  for (let index = 0; index < 20; index++) {
    client.track({
      userId: `user-${index}`,
      event: 'Order Completed',
      properties: { index, sku: `SKU-${index}`, price: 9.99, note: 'héllo 😀' },
      messageId: `m-${index}`,
      timestamp: new Date(Date.UTC(2026, 0, 1)),
    })
  }
}

describe.each(BUILDS)("compression: 'gzip' on the %s", (_name, Client) => {
  it('sends gzip bodies that inflate to exactly the JSON it sends without compression', async () => {
    const endpoint = await sink()
    const sizes: number[] = []
    const zipped = new Client('key', { endpoint: endpoint.url, compression: 'gzip' })
    zipped.on('sent', (info) => sizes.push(info.bytes))
    track20(zipped)
    await zipped.flush()
    const plain = new Client('key', { endpoint: endpoint.url })
    track20(plain)
    await plain.flush()

    const [gzipped, uncompressed] = endpoint.requests
    expect(gzipped?.headers['content-encoding']).toBe('gzip')
    expect(uncompressed?.headers['content-encoding']).toBeUndefined()
    expect(gzipped?.headers['content-type']).toBe(uncompressed?.headers['content-type'])
    // Compressed, and the bytes it reports are the JSON's (what the 500 KB limit counts).
    expect(gzipped!.bytes).toBeLessThan(uncompressed!.bytes / 3)
    expect(sizes).toEqual([uncompressed!.bytes])
    expect(withoutBatchStamp(jsonOf(gzipped!))).toBe(withoutBatchStamp(uncompressed!.body))
    await Promise.all([zipped.close(), plain.close()])
  })

  it('compresses each body once: a retry resends the very same bytes', async () => {
    const endpoint = await sink((_request, index) => ({ status: index < 2 ? 503 : 200 }))
    const client = new Client('key', { endpoint: endpoint.url, compression: 'gzip', retry: { baseDelay: 1 } })
    track20(client)
    await client.flush()
    const [first, ...retries] = endpoint.requests
    expect(retries).toHaveLength(2)
    for (const retry of retries) {
      expect(retry.headers['content-encoding']).toBe('gzip')
      expect(retry.raw.equals(first!.raw)).toBe(true)
    }
    await client.close()
  })

  it('leaves bodies under compressionThreshold uncompressed, and compresses one of exactly that size', async () => {
    const endpoint = await sink()
    const sizeOfOne = async (options: ClientOptions) => {
      const client = new Client('key', { endpoint: endpoint.url, ...options })
      let bytes = 0
      client.on('sent', (info) => (bytes = info.bytes))
      client.track({ userId: 'u1', event: 'E', messageId: 'one', timestamp: new Date(0) })
      await client.close()
      return bytes
    }
    // One small event (some 300 bytes) is under the default threshold, 1,024.
    const bytes = await sizeOfOne({ compression: 'gzip' })
    expect(bytes).toBeLessThan(1_024)
    await sizeOfOne({ compression: 'gzip', compressionThreshold: bytes })
    await sizeOfOne({ compression: 'gzip', compressionThreshold: bytes + 1 })
    await sizeOfOne({ compressionThreshold: 0 })
    const encodings = endpoint.requests.map((request) => request.headers['content-encoding'])
    expect(encodings).toEqual([undefined, 'gzip', undefined, undefined])
    expect(endpoint.requests.map((request) => JSON.parse(jsonOf(request)).batch[0].messageId)).toEqual([
      'one',
      'one',
      'one',
      'one',
    ])
  })

  it('keeps the 500,000-byte batch limit on the JSON, whatever it compresses to', async () => {
    const endpoint = await sink()
    const client = new Client('key', { endpoint: endpoint.url, compression: 'gzip', flushAt: 100 })
    // 60 events of 20 KB (1.2 MB of JSON that compresses to a few KB): three batches at least.
    for (let index = 0; index < 60; index++) {
      client.track({ userId: 'u1', event: 'Big', properties: { index, blob: 'a'.repeat(20_000) } })
    }
    await client.close()
    expect(endpoint.requests.length).toBeGreaterThanOrEqual(3)
    let events = 0
    for (const request of endpoint.requests) {
      const json = jsonOf(request)
      expect(new TextEncoder().encode(json).length).toBeLessThanOrEqual(MAX_BATCH_BYTES)
      expect(request.bytes).toBeLessThan(20_000)
      events += JSON.parse(json).batch.length
    }
    expect(events).toBe(60)
  })
})

describe('compression: falling back to uncompressed bodies', () => {
  it('sends JSON where the runtime has no CompressionStream, and says so in the debug log', async () => {
    const endpoint = await sink()
    const lines: string[] = []
    const logger = { log: (line: string) => lines.push(line), error: (line: string) => lines.push(line) }
    const client = new BrowserClient(
      'key',
      { endpoint: endpoint.url, compression: 'gzip', logger, verbose: true },
      null,
    )
    track20(client)
    await client.close()
    expect(endpoint.requests[0]?.headers['content-encoding']).toBeUndefined()
    expect(JSON.parse(endpoint.requests[0]!.body).batch).toHaveLength(20)
    expect(lines).toContainEqual(expect.stringMatching(/no CompressionStream: batches go uncompressed/))
  })

  it('has no web compressor on a runtime without CompressionStream (the client is then given none)', async () => {
    vi.stubGlobal('CompressionStream', undefined)
    vi.resetModules()
    const { webGzip: missing } = await import('../../src/core/gzip.js')
    expect(missing).toBeUndefined()
    vi.unstubAllGlobals()
  })

  it('sends JSON when compressing fails, and says why in the debug log', async () => {
    const endpoint = await sink()
    const lines: string[] = []
    const logger = { log: (line: string) => lines.push(line), error: (line: string) => lines.push(line) }
    const failing: Gzip = () => Promise.reject(new RangeError('out of memory'))
    const client = new BrowserClient(
      'key',
      { endpoint: endpoint.url, compression: 'gzip', logger, verbose: true },
      failing,
    )
    track20(client)
    await client.close()
    expect(endpoint.requests[0]?.headers['content-encoding']).toBeUndefined()
    expect(lines).toContainEqual(
      expect.stringMatching(/could not gzip batch .* \(RangeError: out of memory\): sent uncompressed/),
    )
  })

  it('sends JSON when the compressor throws at once, from a call or a timer: no throw, no lost message', async () => {
    const endpoint = await sink()
    const throwing: Gzip = () => {
      throw new TypeError('unsupported format gzip')
    }
    const outcomes: unknown[] = []
    for (const options of [{ flushAt: 1 }, { flushAfter: 1 }]) {
      const client = new BrowserClient('key', { endpoint: endpoint.url, compression: 'gzip', ...options }, throwing)
      client.track({ userId: 'u1', event: 'E', properties: { pad: 'x'.repeat(2_000) } }, (error, outcome) =>
        outcomes.push([error, outcome]),
      )
      await client.close()
    }
    expect(outcomes).toEqual([
      [undefined, 'sent'],
      [undefined, 'sent'],
    ])
    expect(endpoint.requests.map((request) => request.headers['content-encoding'])).toEqual([undefined, undefined])
  })

  it("does not wait for a compression past close()'s deadline: close() ends, the message fails with ERR_CLOSE_TIMEOUT", async () => {
    const endpoint = await sink()
    const never: Gzip = () => new Promise(() => undefined)
    const client = new BrowserClient('key', { endpoint: endpoint.url, compression: 'gzip', flushAt: 1 }, never)
    const outcomes: unknown[] = []
    client.track({ userId: 'u1', event: 'E', properties: { pad: 'x'.repeat(2_000) } }, (error, outcome) =>
      outcomes.push([(error as { code?: string } | undefined)?.code, outcome]),
    )
    await client.close({ timeout: 50 })
    expect(outcomes).toEqual([['ERR_CLOSE_TIMEOUT', 'failed']])
    expect(client.pending).toBe(0)
    expect(endpoint.requests).toHaveLength(0)
  })

  it('compresses a body once, however many attempts send it', async () => {
    const endpoint = await sink((_request, index) => ({ status: index < 3 ? 500 : 200 }))
    let calls = 0
    const counting: Gzip = (text) => {
      calls++
      return webGzip!(text)
    }
    const client = new BrowserClient(
      'key',
      { endpoint: endpoint.url, compression: 'gzip', retry: { baseDelay: 1 } },
      counting,
    )
    track20(client)
    await client.close()
    expect(endpoint.requests).toHaveLength(4)
    expect(calls).toBe(1)
  })

  it('leaves compression off by default: plain JSON, as the Go client sends', async () => {
    const endpoint = await sink()
    const client = new BrowserClient('key', { endpoint: endpoint.url })
    track20(client)
    await client.close()
    expect(endpoint.requests[0]?.headers['content-encoding']).toBeUndefined()
  })
})

describe('compression with eventwire dev', () => {
  const running: CliProcess[] = []
  afterEach(async () => {
    await Promise.all(running.splice(0).map((cli) => cli.stop()))
  })

  it.each(BUILDS)(
    'round trip on the %s: dev takes the gzip batches and receives every event',
    async (_name, Client) => {
      const dev = await startDev(['--write-key', 'k'])
      running.push(dev.cli)
      const client = new Client('k', { endpoint: dev.url, compression: 'gzip' })
      let status = 0
      client.on('sent', (info) => (status = info.status))
      track20(client)
      await client.close()
      expect(status).toBe(200)
      await dev.cli.waitFor(() => dev.cli.records().filter((record) => record['event'] === 'received').length === 20)
      const ids = dev.cli
        .records()
        .filter((record) => record['event'] === 'received')
        .map((record) => record['eventId'])
      expect(ids).toEqual(Array.from({ length: 20 }, (_, index) => `m-${index}`))
    },
  )
})

/** What a page's requests carried: bytes as sent, whether gzipped, whether keepalive. */
interface PageRequest {
  readonly bytes: number
  readonly gzip: boolean
  readonly keepalive: boolean
  readonly ids: string[]
}

/**
 * A `fetch` that records each request and answers once `release()` is called: requests started
 * stay in flight, as on a page going away. `statusOf` says the status of the n-th (0-based).
 */
function heldFetch(statusOf: (index: number) => number = () => 200) {
  const requests: PageRequest[] = []
  let release!: () => void
  const released = new Promise<void>((resolve) => {
    release = resolve
  })
  const fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init)
    const raw = new Uint8Array(await request.arrayBuffer())
    const gzip = request.headers.get('content-encoding') === 'gzip'
    const json = gzip ? gunzipSync(raw).toString('utf8') : new TextDecoder().decode(raw)
    const batch = (JSON.parse(json) as { batch: Array<{ messageId: string }> }).batch
    const index =
      requests.push({ bytes: raw.length, gzip, keepalive: request.keepalive, ids: batch.map((m) => m.messageId) }) - 1
    await released
    return Response.json({}, { status: statusOf(index) })
  }
  return { requests, release, fetch: fetch as typeof globalThis.fetch }
}

/** 150 messages of some 1,100 bytes that compress well: 165 KB of JSON, past the keepalive budget. */
function track150(client: ClientBase) {
  for (let index = 0; index < 150; index++) {
    client.track({ userId: 'u1', event: 'E', properties: { index, pad: 'x'.repeat(1_000) }, messageId: `m-${index}` })
  }
}

/** A page whose client compresses, with 150 messages queued and requests that wait for `release()`. */
function pageWithQueue() {
  const page = browserLikeHost('none')
  const held = heldFetch()
  const client = new BrowserClient('key', {
    fetch: held.fetch,
    flushAfter: 60_000,
    flushAt: 1_000,
    compression: 'gzip',
  })
  track150(client)
  return { page, held, client }
}

describe('compression in a browser page', () => {
  afterEach(() => {
    vi.unstubAllGlobals()
  })

  it('fits more of the queue into the keepalive budget as the page is hidden: compressed bodies count', async () => {
    const { page, held, client } = pageWithQueue()
    page.hide()
    // All 165 KB of JSON in flight at once, with keepalive, within the budget on the wire.
    await vi.waitFor(() => expect(held.requests.flatMap((request) => request.ids)).toHaveLength(150))
    expect(held.requests.every((request) => request.keepalive && request.gzip)).toBe(true)
    expect(held.requests.reduce((total, request) => total + request.bytes, 0)).toBeLessThanOrEqual(KEEPALIVE_BUDGET)
    held.release()
    await client.close()
  })

  it('sends uncompressed what it sends as the page is left: a compression might not end before the page', async () => {
    const { page, held, client } = pageWithQueue()
    page.leave()
    await vi.waitFor(() => expect(held.requests.length).toBeGreaterThan(0))
    expect(held.requests.every((request) => request.keepalive && !request.gzip)).toBe(true)
    held.release()
    await client.close()
  })

  it('sends uncompressed, at once, a call made as the page is left, even after the page is then hidden', async () => {
    // Browsers fire pagehide, then visibilitychange (hidden); apps track "Page Hidden" in either.
    const page = browserLikeHost('none')
    const held = heldFetch()
    const client = new BrowserClient('key', { fetch: held.fetch, flushAfter: 60_000, compression: 'gzip' })
    page.leave()
    client.track({ userId: 'u1', event: 'Left', properties: { pad: 'x'.repeat(2_000) }, messageId: 'left' })
    page.hide()
    client.track({ userId: 'u1', event: 'Hidden', properties: { pad: 'x'.repeat(2_000) }, messageId: 'hidden' })
    await vi.waitFor(() => expect(held.requests.flatMap((request) => request.ids)).toEqual(['left', 'hidden']))
    expect(held.requests.every((request) => request.keepalive && !request.gzip)).toBe(true)
    held.release()
    await client.close()
  })

  it('in a hidden page, a compression ending sends more of the queue but leaves a retry waiting for its time', async () => {
    const page = browserLikeHost('none')
    // The first request fails: its batch waits an hour for its retry.
    const held = heldFetch((index) => (index === 0 ? 503 : 200))
    held.release()
    const sent = () => held.requests.flatMap((request) => request.ids)
    const client = new BrowserClient('key', {
      fetch: held.fetch,
      flushAt: 1,
      maxConcurrentRequests: 2,
      compression: 'gzip',
      retry: { baseDelay: 3_600_000, maxDelay: 3_600_000 },
    })
    const retries: number[] = []
    client.on('retry', (info) => retries.push(info.attempt))
    page.hide()
    const pad = 'x'.repeat(2_000)
    client.track({ userId: 'u1', event: 'E', properties: { pad }, messageId: 'failed' })
    await vi.waitFor(() => expect(sent()).toEqual(['failed']))
    client.track({ userId: 'u1', event: 'E', properties: { pad }, messageId: 'next' }, () => undefined)
    await vi.waitFor(() => expect(sent()).toEqual(['failed', 'next']))
    expect(retries).toEqual([])
    await client.close({ timeout: 1 })
  })

  it('compresses again once the page is back from the back-forward cache', async () => {
    const page = browserLikeHost('none')
    const held = heldFetch()
    held.release()
    const client = new BrowserClient('key', { fetch: held.fetch, flushAt: 1, compression: 'gzip' })
    page.leave()
    page.comeBack()
    client.track({ userId: 'u1', event: 'E', properties: { pad: 'x'.repeat(2_000) } })
    await client.flush()
    expect(held.requests.map((request) => request.gzip)).toEqual([true])
    await client.close()
  })

  it('sends a batch still being compressed uncompressed at once when the page is left', async () => {
    const page = browserLikeHost('none')
    const held = heldFetch()
    // A compression that has not ended as the page goes away (a slow device).
    const never: Gzip = () => new Promise(() => undefined)
    const client = new BrowserClient(
      'key',
      { fetch: held.fetch, flushAfter: 60_000, flushAt: 10, compression: 'gzip' },
      never,
    )
    for (let index = 0; index < 10; index++) {
      client.track({ userId: 'u1', event: 'E', properties: { pad: 'x'.repeat(200) }, messageId: `m-${index}` })
    }
    // Taken from the queue, being compressed: nothing sent yet.
    await Promise.resolve()
    expect(held.requests).toHaveLength(0)
    page.leave()
    await vi.waitFor(() => expect(held.requests).toHaveLength(1))
    expect(held.requests[0]).toMatchObject({ gzip: false, keepalive: true })
    expect(held.requests[0]?.ids).toHaveLength(10)
    held.release()
    await client.close()
  })
})
