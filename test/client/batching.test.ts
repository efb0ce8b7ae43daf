import { afterEach, describe, expect, it, vi } from 'vitest'
import { MAX_BATCH_BYTES, type ClientOptions } from '../../src/index.js'
// msw intercepts fetch, not undici's Pool: this suite runs the Client with fetch (web platform).
import { WebClient as Client } from '../helpers/builds.js'
import { LIBRARY } from '../../src/core/version.js'
import { ENDPOINT, useBatchEndpoint } from '../helpers/msw.js'

const { captured } = useBatchEndpoint()
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

function newClient(options: ClientOptions = {}): Client {
  return new Client('write-key', { endpoint: ENDPOINT, ...options })
}

afterEach(() => {
  vi.useRealTimers()
})

describe('wire format', () => {
  it('POSTs {endpoint}/v1/batch with JSON, basic auth and the batch envelope', async () => {
    const client = newClient()
    client.track({ userId: 'u1', event: 'Signed Up', properties: { source: 'ad' } })
    await client.flush()
    expect(captured).toHaveLength(1)
    const [request] = captured
    expect(request?.headers.get('content-type')).toBe('application/json')
    // keepalive is for page hide only: browsers cap such bodies at 64 KiB in all.
    expect(request?.keepalive).toBe(false)
    expect(request?.headers.get('authorization')).toBe(`Basic ${btoa('write-key:')}`)
    expect(request?.json.context).toEqual({ library: { name: 'eventwire', version: LIBRARY.version } })
    expect(request?.json.messageId).toMatch(UUID_V4)
    expect(request?.json.sentAt).toMatch(ISO_MS)
    expect(Object.keys(request?.json ?? {})).toEqual(['batch', 'context', 'messageId', 'sentAt'])
    const [message] = request?.json.batch ?? []
    expect(message).toMatchObject({ type: 'track', userId: 'u1', event: 'Signed Up', properties: { source: 'ad' } })
    expect(message?.['messageId']).toMatch(UUID_V4)
    expect(message?.['timestamp']).toMatch(ISO_MS)
  })

  it('sends each call type with its wire field names', async () => {
    const client = newClient()
    client.identify({ userId: 'u1', traits: { plan: 'pro' } })
    client.page({ userId: 'u1', name: 'Home', category: 'Docs', properties: { path: '/' } })
    client.screen({ anonymousId: 'a1', name: 'Main', category: 'Tabs', properties: { tab: 1 } })
    client.group({ userId: 'u1', groupId: 'g1', traits: { size: 20 } })
    client.alias({ previousId: 'anon-1', userId: 'u1' })
    await client.flush()
    const batch = captured.flatMap((request) => request.json.batch)
    const strip = ({ messageId: _m, timestamp: _t, ...rest }: Record<string, unknown>) => rest
    expect(batch.map(strip)).toEqual([
      { type: 'identify', userId: 'u1', traits: { plan: 'pro' } },
      { type: 'page', userId: 'u1', name: 'Home', category: 'Docs', properties: { path: '/' } },
      { type: 'screen', anonymousId: 'a1', name: 'Main', category: 'Tabs', properties: { tab: 1 } },
      { type: 'group', userId: 'u1', groupId: 'g1', traits: { size: 20 } },
      { type: 'alias', userId: 'u1', previousId: 'anon-1' },
    ])
  })

  it('keeps a given messageId and string timestamp, and sends a Date as ISO 8601 with ms', async () => {
    const client = newClient()
    client.track({ userId: 'u1', event: 'A', messageId: 'my-id', timestamp: '2015-07-10T23:00:00Z' })
    client.track({ userId: 'u1', event: 'B', timestamp: new Date(Date.UTC(2020, 0, 2, 3, 4, 5, 6)) })
    await client.flush()
    const [a, b] = captured[0]?.json.batch ?? []
    expect(a).toMatchObject({ messageId: 'my-id', timestamp: '2015-07-10T23:00:00Z' })
    expect(b?.['timestamp']).toBe('2020-01-02T03:04:05.006Z')
  })

  it('sends the message as it was at call time, not after the caller mutates it', async () => {
    const client = newClient()
    const properties: Record<string, unknown> = { plan: 'free', nested: { n: 1 } }
    const message = { userId: 'u1', event: 'E', properties }
    client.track(message)
    properties['plan'] = 'pro'
    ;(properties['nested'] as { n: number }).n = 2
    message.event = 'Changed'
    await client.flush()
    expect(captured[0]?.json.batch[0]).toMatchObject({ event: 'E', properties: { plan: 'free', nested: { n: 1 } } })
  })
})

describe('when batches are sent', () => {
  it('sends one batch of exactly flushAt messages as soon as the queue reaches flushAt', async () => {
    const client = newClient({ flushAt: 20, flushAfter: 60_000 })
    const sent = new Promise<number>((resolve) => client.once('sent', (info) => resolve(info.messages.length)))
    for (let index = 0; index < 25; index++) client.track({ userId: 'u1', event: `E${index}` })
    expect(await sent).toBe(20)
    expect(captured).toHaveLength(1)
    expect(captured[0]?.json.batch).toHaveLength(20)
    expect(client.pending).toBe(5)
    await client.flush()
    expect(captured.map((request) => request.json.batch.length)).toEqual([20, 5])
  })

  it('sends nothing before flushAt or flushAfter', async () => {
    const client = newClient({ flushAt: 20, flushAfter: 60_000 })
    for (let index = 0; index < 19; index++) client.track({ userId: 'u1', event: 'E' })
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(captured).toHaveLength(0)
    expect(client.pending).toBe(19)
  })

  it('sends every message on its own with flushAt 1 (batching off), even with a backlog', async () => {
    const client = newClient({ flushAt: 1, maxConcurrentRequests: 1 })
    for (let index = 0; index < 5; index++) client.track({ userId: 'u1', event: `E${index}` })
    await client.flush()
    expect(captured.map((request) => request.json.batch.length)).toEqual([1, 1, 1, 1, 1])
  })

  it('flushes after flushAfter ms and not before (fake timers)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] })
    let fetches = 0
    const client = newClient({
      flushAt: 20,
      flushAfter: 5_000,
      fetch: (input, init) => {
        fetches++
        return globalThis.fetch(input, init)
      },
    })
    client.track({ userId: 'u1', event: 'E' })
    await vi.advanceTimersByTimeAsync(4_999)
    expect(fetches).toBe(0)
    await vi.advanceTimersByTimeAsync(1)
    await vi.waitFor(() => expect(fetches).toBe(1))
    vi.useRealTimers()
    await client.flush()
    expect(captured).toHaveLength(1)
    expect(client.pending).toBe(0)
  })

  it('splits a 1.2 MB burst into bodies of at most 500 KB, losing nothing', async () => {
    const client = newClient({ flushAt: 1_000 })
    const pad = 'x'.repeat(1_000)
    for (let index = 0; index < 1_200; index++) client.track({ userId: 'u1', event: 'Big', properties: { index, pad } })
    await client.flush()
    const sizes = captured.map((request) => new TextEncoder().encode(request.body).length)
    expect(sizes.length).toBeGreaterThanOrEqual(3)
    for (const size of sizes) expect(size).toBeLessThanOrEqual(MAX_BATCH_BYTES)
    const indexes = captured.flatMap((request) =>
      request.json.batch.map((m) => (m['properties'] as { index: number }).index),
    )
    expect(indexes).toEqual(Array.from({ length: 1_200 }, (_, index) => index))
  })

  it('lets messages queued while requests are in flight join the next batch, up to 500 KB', async () => {
    const client = newClient({ flushAt: 20, maxConcurrentRequests: 1 })
    for (let index = 0; index < 1_000; index++) client.track({ userId: 'u1', event: 'E', properties: { index } })
    await client.flush()
    expect(captured.map((request) => request.json.batch.length)).toEqual([20, 980])
  })

  it('makes overlapping flush() calls share the same requests', async () => {
    const client = newClient({ flushAfter: 60_000 })
    for (let index = 0; index < 5; index++) client.track({ userId: 'u1', event: 'E' })
    await Promise.all([client.flush(), client.flush(), client.flush()])
    expect(captured).toHaveLength(1)
    expect(client.pending).toBe(0)
  })

  it('resolves flush() only when what was enqueued before it is delivered', async () => {
    const client = newClient({ flushAfter: 60_000 })
    const delivered: string[] = []
    client.on('sent', (info) => delivered.push(...info.messages.map((m) => m.messageId)))
    client.track({ userId: 'u1', event: 'E', messageId: 'first' })
    const flushed = client.flush()
    client.track({ userId: 'u1', event: 'E', messageId: 'second' })
    await flushed
    expect(delivered).toContain('first')
  })
})
