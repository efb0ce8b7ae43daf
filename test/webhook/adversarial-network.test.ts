import fc from 'fast-check'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import {
  createFetchTransport,
  OptionsError,
  WebhookDestination,
  type WebhookTransport,
} from '../../src/webhook/index.js'
import { createHttp1Transport } from '../../src/webhook/network/http1-transport.js'
import { classifyFailure } from '../../src/webhook/network/transport.js'
import { certificates } from '../helpers/certs.js'
import { requestTo } from '../helpers/webhook-request.js'
import { startHostileReceiver, type HostileBehaviour, type HostileReceiver } from '../helpers/hostile-receiver.js'
import { startSink, type Sink } from '../helpers/sink.js'

const transports: Array<[string, () => WebhookTransport]> = [
  ['eventwire HTTP/1.1 (the Node default)', () => createHttp1Transport()],
  ['fetch', () => createFetchTransport()],
]

let sink: Sink | undefined
let hostile: HostileReceiver | undefined
afterEach(async () => {
  await sink?.close()
  await hostile?.close()
  sink = undefined
  hostile = undefined
})

describe('blockPrivateNetworks: literal addresses, at construction and again before connecting', () => {
  it.each(transports)(
    'refuses a literal non-public address before connecting, over %s, however it is spelled',
    async (_name, make) => {
      sink = await startSink()
      const { port } = new URL(sink.url)
      const transport = make()
      for (const host of ['[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '127.0.0.1']) {
        const response = await transport.send(requestTo(`http://${host}:${port}/in`, { blockPrivateNetworks: true }))
        expect(response).toMatchObject({ ok: false, failure: 'blocked' })
        expect(String((response as { cause?: Error }).cause?.message)).toContain('127.0.0.0/8')
      }
      await transport.close?.()
      expect(sink.requests).toHaveLength(0)
    },
  )

  it('keeps the guard when the transport is your own createHttp1Transport({ tls: { ca } }) (the private-CA recipe)', async () => {
    sink = await startSink()
    const { port } = new URL(sink.url)
    const destination = new WebhookDestination({
      webhooks: [{ url: `http://localhost:${port}/in` }],
      blockPrivateNetworks: true,
      transport: createHttp1Transport({ tls: { ca: certificates.ca } }),
    })
    const result = await destination.deliver({ type: 'identify', userId: 'u1' })
    await destination.close()
    expect(result.urls[0]).toMatchObject({ status: 'failed', attempts: 1 })
    expect(result.urls[0]?.lastError?.code).toBe('ERR_BLOCKED_TARGET')
    expect(result.urls[0]?.lastError?.message).toMatch(/localhost resolves to (127\.0\.0\.1|::1)/)
    expect(sink.requests).toHaveLength(0)
  })

  it('tells a transport of your own that the guard is on, on every request', async () => {
    const seen: Array<boolean | undefined> = []
    const transport: WebhookTransport = {
      send: async (request) => {
        seen.push(request.blockPrivateNetworks)
        return { ok: true, status: 204, retryAfter: null }
      },
    }
    const guarded = new WebhookDestination({
      webhooks: [{ url: 'https://hooks.example.com/in' }],
      blockPrivateNetworks: true,
      transport,
    })
    const open = new WebhookDestination({ webhooks: [{ url: 'https://hooks.example.com/in' }], transport })
    await guarded.deliver({ type: 'identify', userId: 'u1' })
    await open.deliver({ type: 'identify', userId: 'u1' })
    await Promise.all([guarded.close(), open.close()])
    expect(seen).toEqual([true, false])
  })
})

describe('every attempt ends within timeoutMs, whatever the receiver does', () => {
  // timeoutMs 600,000 where the body cap, not the deadline, must end the attempt.
  const outcomes: Array<[HostileBehaviour, number, number, { status: string; code?: string; cutByUs: boolean }]> = [
    ['silent', 200, 300, { status: 'failed', code: 'ERR_TIMEOUT', cutByUs: true }],
    ['slow-body', 200, 300, { status: 'delivered', cutByUs: true }],
    ['slow-body', 503, 300, { status: 'failed', code: 'ERR_HTTP_STATUS', cutByUs: true }],
    ['endless-body', 200, 600_000, { status: 'delivered', cutByUs: true }],
    ['truncated', 200, 300, { status: 'delivered', cutByUs: false }],
    ['bad-chunked', 200, 300, { status: 'delivered', cutByUs: true }],
  ]
  const cases = outcomes.flatMap(([behaviour, status, timeoutMs, expected]) =>
    transports.map(([name, make]) => [behaviour, status, name, timeoutMs, make, expected] as const),
  )

  it.each(cases)(
    '%s after HTTP %s, over %s (timeoutMs %s): the status decides, the connection is not left open',
    async (behaviour, status, _name, timeoutMs, make, expected) => {
      hostile = await startHostileReceiver(behaviour, status)
      const destination = new WebhookDestination({
        webhooks: [{ url: hostile.url }],
        transport: make(),
        timeoutMs,
        retryWindowMs: 0,
      })
      const result = await destination.deliver({ type: 'track', userId: 'u1', event: 'E' })
      expect(result.status).toBe(expected.status)
      expect(result.urls[0]?.lastError?.code).toBe(expected.code)
      // The receiver means to go on sending for ever: only the deadline or the body cap ends it.
      if (expected.cutByUs) await vi.waitFor(() => expect(hostile?.closedByClient()).toBe(1), { timeout: 5_000 })
      await destination.close()
    },
  )

  it.each(transports)(
    "in mode 'any', a receiver that trickles its body holds up neither the event nor the healthy URL, over %s",
    async (_name, make) => {
      sink = await startSink()
      hostile = await startHostileReceiver('slow-body', 503)
      const destination = new WebhookDestination({
        webhooks: [{ url: `${sink.url}/in` }, { url: hostile.url }],
        transport: make(),
        timeoutMs: 60_000,
      })
      const result = await destination.deliver({ type: 'track', userId: 'u1', event: 'E' })
      expect(result.status).toBe('delivered')
      expect(result.urls.map((url) => url.status)).toEqual(['delivered', 'superseded'])
      await destination.close({ timeout: 100 })
    },
  )

  it.each(transports)('closing the transport cuts bodies still being read, over %s', async (_name, make) => {
    hostile = await startHostileReceiver('slow-body', 200)
    const transport = make()
    const response = await transport.send(requestTo(hostile.url, { timeoutMs: 600_000 }))
    expect(response).toMatchObject({ ok: true, status: 200 })
    await transport.close?.()
    await vi.waitFor(() => expect(hostile?.closedByClient()).toBe(1), { timeout: 5_000 })
  })

  it.each<[string, () => WebhookTransport]>([
    ['eventwire HTTP/1.1 (the Node default)', () => createHttp1Transport({ connections: 1 })],
  ])('answers an attempt still waiting for a connection at its own deadline, over %s', async (_name, make) => {
    hostile = await startHostileReceiver('silent')
    const transport = make()
    // The first takes the only connection and keeps it; the second waits for it past its deadline.
    const holding = transport.send(requestTo(hostile.url, { timeoutMs: 600_000 }))
    await hostile.received(1)
    const queued = await transport.send(requestTo(hostile.url, { timeoutMs: 100 }))
    expect(queued).toMatchObject({ ok: false, failure: 'timeout' })
    expect(hostile.requests()).toBe(1)
    await hostile.close()
    expect(await holding).toMatchObject({ ok: false })
    await transport.close?.()
  })

  it('close({ timeout }) returns by its deadline while a receiver keeps a request open', async () => {
    hostile = await startHostileReceiver('silent')
    const destination = new WebhookDestination({ webhooks: [{ url: hostile.url }], timeoutMs: 600_000 })
    const delivery = destination.deliver({ type: 'track', userId: 'u1', event: 'E' })
    await hostile.received(1)
    await destination.close({ timeout: 50 })
    // The receiver going away ends the request; the event is reported, not lost.
    await hostile.close()
    const result = await delivery
    expect(result.urls[0]?.lastError?.code).toBe('ERR_CLOSED')
  })
})

describe('static headers', () => {
  it.each(['Expect', 'Upgrade', 'Keep-Alive', 'TE', 'Trailer', 'Proxy-Connection', 'expect', 'KEEP-ALIVE'])(
    'refuses %s at construction, naming it',
    (name) => {
      const build = () =>
        new WebhookDestination({
          webhooks: [{ url: 'https://hooks.example.com/in', headers: { [name]: '100-continue' } }],
        })
      expect(build).toThrow(OptionsError)
      expect(build).toThrow(name)
    },
  )

  describe('a header accepted at construction is one every transport sends', () => {
    let receiver: Sink
    const made = transports.map(([name, make]) => [name, make()] as const)
    beforeAll(async () => {
      receiver = await startSink()
    })
    afterAll(async () => {
      await Promise.all(made.map(([, transport]) => transport.close?.()))
      await receiver.close()
    })

    const special = [
      'Connection',
      'Keep-Alive',
      'Upgrade',
      'Expect',
      'TE',
      'Trailer',
      'Transfer-Encoding',
      'Content-Length',
      'Host',
      'Content-Type',
      'Proxy-Connection',
      'Authorization',
      'Cookie',
      'Accept-Encoding',
      'Date',
      'Origin',
      'Via',
      'X-Team',
    ]
    const name = fc.oneof(
      fc.constantFrom(...special),
      fc.string({ unit: fc.constantFrom(..."!#$%&'*+-.^_`|~09AZaz".split('')), minLength: 1, maxLength: 12 }),
    )
    const value = fc.string({
      unit: fc.constantFrom('a', ' ', '\t', 'é', '~', ',', 'close', 'keep-alive', '100-continue', 'chunked', '0'),
      maxLength: 6,
    })

    it.each(made)('over %s', async (_name, transport) => {
      await fc.assert(
        fc.asyncProperty(name, value, async (header, text) => {
          let destination: WebhookDestination
          try {
            destination = new WebhookDestination({
              webhooks: [{ url: `${receiver.url}/in`, headers: { [header]: text } }],
              transport,
              retryWindowMs: 0,
            })
          } catch (error) {
            expect(error).toBeInstanceOf(OptionsError)
            expect((error as Error).message).toContain(header)
            return
          }
          const result = await destination.deliver({ type: 'identify', userId: 'u1' })
          expect(result.urls[0]?.lastError?.message).toBeUndefined()
          expect(result.status).toBe('delivered')
        }),
        { numRuns: 150 },
      )
    })
  })
})

describe('certificate failures as each runtime reports them', () => {
  it.each([
    [
      'Deno (rustls), unknown issuer',
      new TypeError('fetch failed', {
        cause: new Error(
          'error sending request for url (https://127.0.0.1:1/): client error (Connect): invalid peer certificate: UnknownIssuer',
        ),
      }),
    ],
    [
      'Deno (rustls), expired',
      new TypeError('fetch failed', {
        cause: new Error(
          'error sending request for url (https://127.0.0.1:1/): client error (Connect): invalid peer certificate: Expired',
        ),
      }),
    ],
    [
      'Bun, self-signed',
      Object.assign(new TypeError('self signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }),
    ],
    [
      'Bun, wrong issuer',
      Object.assign(new TypeError('unable to verify the first certificate'), {
        code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      }),
    ],
  ])('%s: tls, not retried', (_name, error) => {
    expect(classifyFailure(error)).toBe('tls')
  })

  it('keeps Deno connection failures that are not about certificates as network failures', () => {
    const refused = new TypeError('fetch failed', {
      cause: new Error(
        'error sending request for url (https://127.0.0.1:1/): client error (Connect): tcp connect error: Connection refused (os error 111)',
      ),
    })
    expect(classifyFailure(refused)).toBe('network')
  })
})
