import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  Client,
  definePlan,
  MessageTooLargeError,
  OptionsError,
  ValidationError,
  type DroppedInfo,
  type MessageOutcome,
  type Middleware,
} from '../../src/index.js'
// @ts-expect-error: the examples are plain JavaScript
import { consentGate, run, sample, scrub, withRequestId } from '../../examples/enrich-and-filter.mjs'
import { useSinks, type Sink } from '../helpers/sink.js'

const sink = useSinks()
const sent = (server: Sink) => server.requests.flatMap((request) => JSON.parse(request.body).batch)

/** A middleware that records its name in the message's properties, to show the order. */
const mark =
  (name: string): Middleware =>
  (message) =>
    message.type === 'track'
      ? { ...message, properties: { ...message.properties, trail: `${message.properties?.['trail'] ?? ''}${name}` } }
      : message

describe('middleware', () => {
  it('runs in the order given, construction first, then use(), and sends what the last returns', async () => {
    const server = await sink()
    const client = new Client('key', { endpoint: server.url, middleware: [mark('a'), mark('b')] })
    expect(client.use(mark('c'))).toBe(client)
    client.track({ userId: 'u1', event: 'E' })
    await client.close()
    expect(sent(server)[0].properties).toEqual({ trail: 'abc' })
  })

  it("never changes the caller's object, even when a middleware changes the message in place", async () => {
    const server = await sink()
    const inPlace: Middleware = (message) => {
      if (message.type !== 'track') return message
      ;(message.properties as { items: string[] }).items.push('added')
      message.event = 'Renamed'
      return message
    }
    const client = new Client('key', { endpoint: server.url, middleware: [inPlace] })
    const call = { userId: 'u1', event: 'E', properties: { items: ['given'] } }
    client.track(call)
    await client.close()
    expect(call).toEqual({ userId: 'u1', event: 'E', properties: { items: ['given'] } })
    expect(sent(server)[0]).toMatchObject({ event: 'Renamed', properties: { items: ['given', 'added'] } })
  })

  it("checks what a middleware returns with the call's rules: the same typed errors, nothing queued, nothing lost", async () => {
    const server = await sink()
    let change: (message: Record<string, unknown>) => unknown = (message) => message
    const client = new Client('key', {
      endpoint: server.url,
      flushAt: 100,
      middleware: [(message) => change(message as unknown as Record<string, unknown>) as never],
    })
    client.track({ userId: 'u1', event: 'Kept' })
    const refusals: unknown[] = []
    for (const bad of [
      (message: Record<string, unknown>) => ({ ...message, properties: { id: 1n } }),
      (message: Record<string, unknown>) => ({ ...message, properties: { pad: 'x'.repeat(32_000) } }),
      (message: Record<string, unknown>) => ({ ...message, userId: undefined }),
      () => 'not a message',
    ]) {
      change = bad
      try {
        client.track({ userId: 'u1', event: 'E' })
      } catch (error) {
        refusals.push(error)
      }
    }
    expect(refusals.map((error) => (error as { code: string }).code)).toEqual([
      'ERR_NOT_SERIALIZABLE',
      'ERR_MESSAGE_TOO_LARGE',
      'ERR_MISSING_IDENTITY',
      'ERR_MIDDLEWARE',
    ])
    expect(refusals[1]).toBeInstanceOf(MessageTooLargeError)
    expect(client.pending).toBe(1)
    await client.close()
    expect(sent(server).map((message: { event: string }) => message.event)).toEqual(['Kept'])
  })

  it("tells a dropped call apart from sent and failed: 'dropped' event and callback, nothing sent", async () => {
    const server = await sink()
    const client = new Client('key', {
      endpoint: server.url,
      middleware: [
        function dropDebug(message) {
          return message.type === 'track' && message.event === 'Debug' ? null : message
        },
      ],
    })
    const dropped: DroppedInfo[] = []
    const outcomes: Array<[unknown, MessageOutcome]> = []
    client.on('dropped', (info) => dropped.push(info))
    expect(
      client.track({ userId: 'u1', event: 'Debug', messageId: 'm-1' }, (error, outcome) =>
        outcomes.push([error, outcome]),
      ),
    ).toBe(true)
    // Told after the call returns, like every outcome.
    expect(outcomes).toEqual([])
    client.track({ userId: 'u1', event: 'Kept' }, (error, outcome) => outcomes.push([error, outcome]))
    await client.close()
    expect(dropped).toEqual([{ type: 'track', messageId: 'm-1', middleware: 'middleware[0] (dropDebug)' }])
    expect(outcomes).toEqual([
      [undefined, 'dropped'],
      [undefined, 'sent'],
    ])
    expect(sent(server).map((message: { event: string }) => message.event)).toEqual(['Kept'])
  })

  it('refuses the call of a middleware that throws, naming it, and leaves the queue and later calls alone', async () => {
    const server = await sink()
    let broken = false
    const client = new Client('key', { endpoint: server.url, flushAt: 100 })
    client.track({ userId: 'u1', event: 'Before' })
    client.use(function flaky(message) {
      if (broken) throw new Error('boom')
      return message
    })
    broken = true
    let refusal: unknown
    try {
      client.track({ userId: 'u1', event: 'During' })
    } catch (error) {
      refusal = error
    }
    expect(refusal).toBeInstanceOf(ValidationError)
    expect(refusal).toMatchObject({
      code: 'ERR_MIDDLEWARE',
      message: expect.stringMatching(/middleware\[0\] \(flaky\) threw: Error: boom/),
    })
    expect((refusal as Error).cause).toEqual(new Error('boom'))
    broken = false
    client.track({ userId: 'u1', event: 'After' })
    await client.close()
    expect(sent(server).map((message: { event: string }) => message.event)).toEqual(['Before', 'After'])
  })

  it('refuses what is not a middleware', () => {
    expect(() => new Client('key', { middleware: [1 as never] })).toThrow(OptionsError)
    expect(() => new Client('key', { middleware: (() => null) as never })).toThrow(OptionsError)
    expect(() => new Client('key').use('nope' as never)).toThrow(OptionsError)
  })

  it("applies a plan's transforms once, whatever a middleware changes (the plan checks the call, the types the middleware)", async () => {
    const server = await sink()
    const plan = definePlan({ events: { E: z.object({ orderId: z.string().transform((id) => `order-${id}`) }) } })
    const client = new Client('key', {
      endpoint: server.url,
      plan,
      middleware: [(message) => ({ ...message, context: { ...message.context, requestId: 'r' } })],
    })
    client.track({ userId: 'u1', event: 'E', properties: { orderId: 'o1' } })
    await client.close()
    expect(sent(server)[0]).toMatchObject({ properties: { orderId: 'order-o1' }, context: { requestId: 'r' } })
  })

  it('refuses with ERR_MIDDLEWARE whatever a middleware throws or returns that is not a message', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('a proxy that throws')
        },
        getPrototypeOf() {
          throw new Error('no prototype either')
        },
      },
    )
    const thrown = [
      Object.create(null),
      hostile,
      {
        toString: () => {
          throw new Error('toString')
        },
      },
      null,
      'text',
    ]
    for (const value of thrown) {
      const client = new Client('key', {
        middleware: [
          () => {
            throw value
          },
        ],
      })
      expect(() => client.track({ userId: 'u1', event: 'E' })).toThrow(
        expect.objectContaining({ code: 'ERR_MIDDLEWARE' }),
      )
    }
    for (const [result, why] of [
      [Promise.resolve(null), /returned a promise/],
      // Rejected, and nobody waits for it: refused, and the rejection handled (no process crash).
      [Promise.reject(new Error('later')), /returned a promise/],
      [false, /returned boolean/],
      [42, /returned number/],
      [[1], /not a plain message/],
      [new Date(), /not a plain message/],
      [new Map(), /not a plain message/],
    ] as const) {
      const client = new Client('key', { middleware: [() => result as never] })
      expect(() => client.track({ userId: 'u1', event: 'E' })).toThrow(why)
    }
  })

  it('keeps the refusal of a middleware that calls the client again short, whatever the depth', () => {
    let depth = 0
    const client: Client = new Client('key', {
      middleware: [
        (message) => {
          if (++depth > 30) throw new Error('deep enough')
          client.track({ userId: 'u1', event: 'Again' })
          return message
        },
      ],
    })
    let refusal: unknown
    try {
      client.track({ userId: 'u1', event: 'E' })
    } catch (error) {
      refusal = error
    }
    expect(refusal).toMatchObject({ code: 'ERR_MIDDLEWARE' })
    expect((refusal as Error).message.length).toBeLessThan(400)
  })

  it('accepts nothing once a middleware closed the client, and use() inside a middleware shapes the next call', async () => {
    const server = await sink()
    const client = new Client('key', { endpoint: server.url })
    let closing: Promise<void> | undefined
    client.use((message) => {
      closing ??= client.close()
      return message
    })
    expect(() => client.track({ userId: 'u1', event: 'E' })).toThrow(expect.objectContaining({ code: 'ERR_CLOSED' }))
    await closing
    // Closing and dropping: refused all the same, not told as dropped.
    const dropping = new Client('key', { endpoint: server.url })
    const dropped: unknown[] = []
    dropping.on('dropped', (info) => dropped.push(info))
    dropping.use(() => {
      void dropping.close()
      return null
    })
    expect(() => dropping.track({ userId: 'u1', event: 'E' })).toThrow(expect.objectContaining({ code: 'ERR_CLOSED' }))
    await dropping.close()
    expect(dropped).toEqual([])
    expect(client.pending).toBe(0)

    const other = new Client('key', { endpoint: server.url })
    let added = false
    other.use((message) => {
      if (!added) other.use(() => null)
      added = true
      return message
    })
    const outcomes: string[] = []
    other.track({ userId: 'u1', event: 'First' }, (_error, outcome) => outcomes.push(outcome))
    other.track({ userId: 'u1', event: 'Second' }, (_error, outcome) => outcomes.push(outcome))
    await other.close()
    expect(outcomes.sort()).toEqual(['dropped', 'sent'])
    expect(sent(server).map((message: { event: string }) => message.event)).toEqual(['First'])
  })
})

describe('examples/enrich-and-filter.mjs: the recipes', () => {
  const message = (fields: Record<string, unknown>): Record<string, unknown> => ({
    type: 'track',
    messageId: 'm',
    timestamp: 't',
    userId: 'u1',
    event: 'E',
    ...fields,
  })

  it('scrubs listed paths and e-mail addresses in every string', () => {
    const scrubbed = scrub({ paths: ['traits.phone', 'properties.card.number'] })(
      message({
        traits: { phone: '123', email: 'ada@example.com' },
        properties: { card: { number: '4111', brand: 'visa' }, notes: ['mail bob@example.org please'] },
      }),
    )
    expect(scrubbed.traits).toEqual({ email: '[redacted]' })
    expect(scrubbed.properties).toEqual({ card: { brand: 'visa' }, notes: ['mail [redacted] please'] })
  })

  it('drops everything until consent is given, then passes everything', () => {
    let consented = false
    const gate = consentGate(() => consented)
    expect(gate(message({}))).toBeNull()
    consented = true
    expect(gate(message({}))).toMatchObject({ event: 'E' })
  })

  it('samples named track events at their rate and lets the others through', () => {
    const draws = [0.05, 0.5]
    const sampling = sample({ Scrolled: 0.1 }, () => draws.shift() ?? 1)
    expect(sampling(message({ event: 'Scrolled' }))).not.toBeNull()
    expect(sampling(message({ event: 'Scrolled' }))).toBeNull()
    expect(sampling(message({ event: 'Paid' }))).not.toBeNull()
    expect(sampling({ ...message({}), type: 'identify' })).not.toBeNull()
  })

  it('adds the current request id to the context, keeping what it has', () => {
    const original = message({ context: { ip: '10.0.0.1' } })
    expect((withRequestId(() => 'req-7')(original) as { context: unknown }).context).toEqual({
      ip: '10.0.0.1',
      requestId: 'req-7',
    })
    expect(original.context).toEqual({ ip: '10.0.0.1' })
    expect(withRequestId(() => undefined)(original)).toBe(original)
  })

  it('runs end to end: consent, scrubbing, sampling, request ids and the default context on a real endpoint', async () => {
    const server = await sink()
    const printed: string[] = []
    await run(server.url, (line: string) => printed.push(line))
    expect(printed).toEqual(['dropped by middleware[0] (consent): track', 'dropped by middleware[2] (sampling): track'])
    const batches = server.requests.map((request) => JSON.parse(request.body))
    expect(batches[0].context).toMatchObject({
      app: { name: 'shop' },
      environment: 'production',
      library: { name: 'eventwire' },
    })
    const messages = batches.flatMap((batch: { batch: unknown[] }) => batch.batch)
    expect(messages).toMatchObject([
      { type: 'identify', traits: { email: '[redacted]', plan: 'pro' }, context: { requestId: 'req-1' } },
      {
        type: 'track',
        event: 'Signed Up',
        properties: { note: 'invited by [redacted]' },
        context: { requestId: 'req-2' },
      },
    ])
    expect((messages[0] as { traits: object }).traits).not.toHaveProperty('phone')
  })
})
