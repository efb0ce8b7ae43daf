import { afterEach, describe, expect, it } from 'vitest'
import { MAX_BATCH_BYTES, type DeliveryError } from '../../src/index.js'
import { CLIENT_BUILDS } from '../helpers/builds.js'
import { LIBRARY } from '../../src/core/version.js'
import { startSink, type Sink } from '../helpers/sink.js'

let sink: Sink | undefined
afterEach(async () => {
  await sink?.close()
  sink = undefined
})

describe.each(CLIENT_BUILDS)('the %s against a real HTTP server on loopback', (_build, Client) => {
  it('keeps 50 requests in flight, compressed and retried, without a listener-leak warning', async () => {
    // Every first attempt fails: each batch waits for a retry while the others are in flight.
    sink = await startSink((_request, index) => ({ status: index < 50 ? 503 : 200, delayMs: 50 }))
    const warnings: Error[] = []
    const onWarning = (warning: Error) => warnings.push(warning)
    process.on('warning', onWarning)
    try {
      const client = new Client('write-key', {
        endpoint: sink.url,
        flushAt: 1,
        maxConcurrentRequests: 50,
        compression: 'gzip',
        retry: { baseDelay: 10 },
      })
      for (let index = 0; index < 50; index++) {
        client.track({ userId: 'u1', event: 'Concurrent', properties: { index, pad: 'x'.repeat(2_000) } })
      }
      await client.close()
      expect(sink.requests).toHaveLength(100)
    } finally {
      process.off('warning', onWarning)
    }
    expect(warnings.map((warning) => warning.name)).not.toContain('MaxListenersExceededWarning')
  })

  it('delivers a burst of 100,000 small calls made in a tight loop, losing nothing, within 500 KB per body', async () => {
    sink = await startSink()
    const client = new Client('write-key', { endpoint: sink.url })
    const errors: DeliveryError[] = []
    client.on('error', (error) => errors.push(error))
    // A producer that ignores the backpressure signal still loses nothing under the default bounds.
    let askedToWait = 0
    for (let index = 0; index < 100_000; index++) {
      if (!client.track({ userId: `u${index % 100}`, event: 'Burst', properties: { index } })) askedToWait++
    }
    await client.close()
    expect(errors).toEqual([])
    expect(askedToWait).toBeGreaterThan(0)
    const delivered = sink.delivered()
    expect(delivered).toHaveLength(100_000)
    expect(new Set(delivered.map((message) => message['messageId'])).size).toBe(100_000)
    for (const request of sink.requests) {
      expect(request.method).toBe('POST')
      expect(request.path).toBe('/v1/batch')
      expect(request.headers['authorization']).toBe(`Basic ${Buffer.from('write-key:').toString('base64')}`)
      expect(request.bytes).toBeLessThanOrEqual(MAX_BATCH_BYTES)
    }
    // Batches grow while requests are in flight: far fewer requests than 100,000 / flushAt.
    expect(sink.requests.length).toBeLessThan(500)
  })

  it('retries a 500 from a real server and reports success through the per-call callback', async () => {
    sink = await startSink((_request, index) => ({ status: index === 0 ? 500 : 200 }))
    const client = new Client('key', { endpoint: sink.url, retry: { baseDelay: 5 } })
    const outcome = new Promise<DeliveryError | undefined>((resolve) =>
      client.track({ userId: 'u1', event: 'E' }, resolve),
    )
    await client.close()
    expect(await outcome).toBeUndefined()
    expect(sink.requests).toHaveLength(2)
    expect(sink.requests[0]?.body).toBe(sink.requests[1]?.body)
  })

  it('sends multi-byte UTF-8 intact and counts its bytes exactly', async () => {
    sink = await startSink()
    const client = new Client('key', { endpoint: sink.url })
    let sentBytes = 0
    client.on('sent', (info) => {
      sentBytes = info.bytes
    })
    client.track({ userId: 'ü-1', event: 'Café ☕', properties: { emoji: '😀👍🏽', cjk: '東京' } })
    await client.close()
    expect(sink.delivered()[0]).toMatchObject({
      userId: 'ü-1',
      event: 'Café ☕',
      properties: { emoji: '😀👍🏽', cjk: '東京' },
    })
    expect(sentBytes).toBe(sink.requests[0]?.bytes)
  })

  it('sends User-Agent: eventwire/<version>, as the Go client sends its own (fetch would send "node")', async () => {
    sink = await startSink()
    const client = new Client('key', { endpoint: sink.url })
    client.track({ userId: 'u1', event: 'E' })
    await client.close()
    expect(sink.requests.map((request) => request.headers['user-agent'])).toEqual([`eventwire/${LIBRARY.version}`])
  })
})
