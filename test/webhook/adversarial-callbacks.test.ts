import fc from 'fast-check'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  OptionsError,
  WebhookDestination,
  WebhookError,
  type DeliveryResult,
  type WebhookResponse,
  type WebhookSettings,
  type WebhookTransport,
} from '../../src/webhook/index.js'
import { WebhookDestinationBase } from '../../src/webhook/delivery/destination-base.js'
import type { WebhookPlatform } from '../../src/webhook/delivery/engine-parts.js'
import { startSink, type Responder, type Sink } from '../helpers/sink.js'

// Every test here hands the engine a user callback that misbehaves. Two things must hold whatever
// it does: deliver() settles, and the process sees no unhandled rejection (vitest fails the run on
// one; the listener below names the test that caused it).
const unhandled: unknown[] = []
const onUnhandled = (reason: unknown) => unhandled.push(reason)
const sinks: Sink[] = []
const destinations: WebhookDestinationBase[] = []
beforeEach(() => {
  process.on('unhandledRejection', onUnhandled)
})
afterEach(async () => {
  await Promise.all(destinations.splice(0).map((destination) => destination.close({ timeout: 1_000 })))
  await Promise.all(sinks.splice(0).map((sink) => sink.close()))
  // Node reports an unhandled rejection once the microtasks of a turn have run: let one pass.
  await new Promise((resolve) => setImmediate(resolve))
  process.off('unhandledRejection', onUnhandled)
  expect(unhandled.splice(0)).toEqual([])
  vi.restoreAllMocks()
})

async function receiver(respond?: Responder): Promise<Sink> {
  const sink = await startSink(respond)
  sinks.push(sink)
  return sink
}

function destination(settings: WebhookSettings): WebhookDestination {
  const created = new WebhookDestination(settings)
  destinations.push(created)
  return created
}

/** A transport that answers each request with what `answer` gives for the n-th (0-based) call. */
function scriptedTransport(answer: (call: number) => Promise<WebhookResponse>): WebhookTransport & { calls: number } {
  const transport = {
    calls: 0,
    send: () => answer(transport.calls++),
  }
  return transport
}

const track = { type: 'track', userId: 'u1', event: 'Paid' } as const
const fails500: Responder = () => ({ status: 500 })

describe('a backoff that returns garbage or throws', () => {
  const garbage: Array<[string, () => unknown]> = [
    ['undefined (a lookup table that ran out)', () => [100, 200][5]],
    ['NaN', () => Number.NaN],
    ['a negative number', () => -1],
    ['Infinity', () => Number.POSITIVE_INFINITY],
    ['a string', () => '100'],
    ['null', () => null],
    [
      'a proxy that throws on every access',
      () =>
        new Proxy(
          {},
          {
            get: () => {
              throw new Error('trap')
            },
            getPrototypeOf: () => {
              throw new Error('trap')
            },
          },
        ),
    ],
  ]

  it.each(garbage)(
    'ends the retries of an event whose backoff returns %s with ERR_CALLBACK',
    async (_name, backoff) => {
      const sink = await receiver(fails500)
      const target = destination({ webhooks: [{ url: sink.url }], backoff: backoff as () => number })
      const failed: DeliveryResult[] = []
      target.on('failed', (result) => failed.push(result))
      const result = await target.deliver(track)
      expect(result.status).toBe('failed')
      expect(failed).toEqual([result])
      const [url] = result.urls
      expect(url?.attempts).toBe(1)
      expect(url?.lastStatus).toBe(500)
      expect(url?.lastError).toBeInstanceOf(WebhookError)
      expect(url?.lastError?.code).toBe('ERR_CALLBACK')
      expect(url?.lastError?.status).toBe(500)
      expect(url?.lastError?.message).toMatch(/backoff/)
      expect(url?.lastError?.cause).toBeInstanceOf(Error)
      expect(target.pendingRetries).toBe(0)
    },
    5_000,
  )

  it('ends the retries with ERR_CALLBACK whose cause is what the backoff threw, without an unhandled rejection', async () => {
    const sink = await receiver(fails500)
    const thrown = new Error('table lookup failed')
    const target = destination({
      webhooks: [{ url: sink.url }, { url: `${sink.url}/b` }],
      backoff: () => {
        throw thrown
      },
    })
    const result = await target.deliver(track)
    expect(result.status).toBe('failed')
    for (const url of result.urls) {
      expect(url.lastError?.code).toBe('ERR_CALLBACK')
      expect(url.lastError?.cause).toBe(thrown)
      expect(url.lastError?.message).toContain('table lookup failed')
    }
  }, 5_000)

  it('keeps delivering other events after a backoff failed once', async () => {
    let calls = 0
    const sink = await receiver((_request, index) => ({ status: index < 2 ? 500 : 200 }))
    const target = destination({ webhooks: [{ url: sink.url }], backoff: () => (calls++ === 0 ? Number.NaN : 10) })
    expect((await target.deliver(track)).urls[0]?.lastError?.code).toBe('ERR_CALLBACK')
    const result = await target.deliver(track)
    expect(result.status).toBe('delivered')
    expect(result.urls[0]?.attempts).toBe(2)
  }, 5_000)

  it('accepts any finite delay >= 0 from any attempt number (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.double(), fc.anything(), fc.integer({ min: -5, max: 5 })), async (value) => {
        let answered = 0
        const transport = scriptedTransport(async () =>
          answered++ === 0 ? { ok: true, status: 503, retryAfter: null } : { ok: true, status: 200, retryAfter: null },
        )
        const target = new WebhookDestination({
          webhooks: [{ url: 'http://127.0.0.1:9/' }],
          transport,
          backoff: () => value as number,
        })
        const valid = typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 50
        // Large valid delays are not waited for: close() reports them ERR_CLOSED.
        const delivered = target.deliver(track)
        if (typeof value === 'number' && Number.isFinite(value) && value > 50) {
          await vi.waitFor(() => expect(target.pendingRetries).toBe(1))
          await target.close()
          expect((await delivered).urls[0]?.lastError?.code).toBe('ERR_CLOSED')
          return
        }
        const result = await delivered
        await target.close()
        if (valid) expect(result.status).toBe('delivered')
        else expect(result.urls[0]?.lastError?.code).toBe('ERR_CALLBACK')
      }),
      { numRuns: 60 },
    )
  }, 15_000)
})

describe('a custom transport that throws, rejects, returns garbage or never answers', () => {
  const thrown = new Error('socket exploded')
  const broken: Array<[string, WebhookTransport['send']]> = [
    [
      'throws synchronously',
      () => {
        throw thrown
      },
    ],
    ['rejects', () => Promise.reject(thrown)],
  ]

  it.each(broken)(
    'counts a transport that %s as ERR_NETWORK with the thrown value as cause',
    async (_name, send) => {
      const target = destination({ webhooks: [{ url: 'http://127.0.0.1:9/' }], transport: { send }, retryWindowMs: 0 })
      const result = await target.deliver(track)
      expect(result.status).toBe('failed')
      expect(result.urls[0]?.lastError?.code).toBe('ERR_NETWORK')
      expect(result.urls[0]?.lastError?.cause).toBe(thrown)
      expect(result.urls[0]?.lastError?.message).toContain('socket exploded')
    },
    5_000,
  )

  it('retries a throwing transport as it retries network errors', async () => {
    const transport = scriptedTransport(async (call) => {
      if (call < 2) throw thrown
      return { ok: true, status: 200, retryAfter: null }
    })
    const retries: string[] = []
    const target = destination({ webhooks: [{ url: 'http://127.0.0.1:9/' }], transport, backoff: () => 5 })
    target.on('retry', (notice) => retries.push(notice.error.code))
    const result = await target.deliver(track)
    expect(result.status).toBe('delivered')
    expect(result.urls[0]?.attempts).toBe(3)
    expect(retries).toEqual(['ERR_NETWORK', 'ERR_NETWORK'])
  }, 5_000)

  it.each<[string, unknown]>([
    ['undefined', undefined],
    ['null', null],
    ['a string', 'ok'],
    ['{ ok: true } without a status', { ok: true }],
    ['a status that is not an HTTP status', { ok: true, status: 42.5, retryAfter: null }],
    ['{ ok: false } with an unknown failure', { ok: false, failure: 'gremlins', cause: 'x' }],
    [
      'an object whose getters throw',
      Object.defineProperty({}, 'ok', {
        get: () => {
          throw new TypeError('transport answer getter')
        },
        enumerable: true,
      }),
    ],
  ])(
    'counts a transport that resolves %s as ERR_NETWORK naming what it got',
    async (_name, value) => {
      const target = destination({
        webhooks: [{ url: 'http://127.0.0.1:9/' }],
        transport: { send: async () => value as WebhookResponse },
        retryWindowMs: 0,
      })
      const result = await target.deliver(track)
      expect(result.status).toBe('failed')
      const error = result.urls[0]?.lastError
      expect(error?.code).toBe('ERR_NETWORK')
      expect(error?.cause).toBeInstanceOf(TypeError)
      expect(error?.message).toMatch(/transport/)
    },
    5_000,
  )

  it('bounds a transport whose promise never settles by timeoutMs (ERR_TIMEOUT), and still closes', async () => {
    const target = destination({
      webhooks: [{ url: 'http://127.0.0.1:9/' }],
      transport: { send: () => new Promise(() => {}) },
      timeoutMs: 50,
      retryWindowMs: 0,
    })
    const result = await target.deliver(track)
    expect(result.status).toBe('failed')
    expect(result.urls[0]?.lastError?.code).toBe('ERR_TIMEOUT')
    await target.close({ timeout: 1_000 })
  }, 5_000)

  it.each<[string, () => Promise<void>]>([
    ['never settles', () => new Promise(() => {})],
    ['rejects', () => Promise.reject(new Error('close exploded'))],
    [
      'throws',
      (): Promise<void> => {
        throw new Error('close exploded')
      },
    ],
  ])(
    "returns from close({ timeout }) by its deadline, without rejecting, when the transport's close() %s",
    async (_name, close) => {
      const reported: unknown[] = []
      const target = destination({
        webhooks: [{ url: 'http://127.0.0.1:9/' }],
        transport: { send: async () => ({ ok: true, status: 200, retryAfter: null }), close },
      })
      vi.spyOn(console, 'error').mockImplementation((...args) => void reported.push(args))
      expect((await target.deliver(track)).status).toBe('delivered')
      await expect(target.close({ timeout: 300 })).resolves.toBeUndefined()
      vi.restoreAllMocks()
    },
    5_000,
  )

  it('refuses at construction a transport whose send getter throws', () => {
    const transport = {
      get send(): never {
        throw new Error('send getter')
      },
    }
    expect(() => destination({ webhooks: [{ url: 'http://127.0.0.1:9/' }], transport })).toThrow(OptionsError)
  })

  it('settles every delivery whatever a transport does (property)', async () => {
    const behaviour = fc.constantFrom('throw', 'reject', 'garbage', 'hang', 'ok', 'fail')
    await fc.assert(
      fc.asyncProperty(fc.array(behaviour, { minLength: 1, maxLength: 6 }), async (script) => {
        const transport = scriptedTransport((call): Promise<WebhookResponse> => {
          switch (script[call % script.length]) {
            case 'throw':
              throw new Error('sync')
            case 'reject':
              return Promise.reject(new Error('async'))
            case 'garbage':
              return Promise.resolve({ ok: 'maybe' } as unknown as WebhookResponse)
            case 'hang':
              return new Promise(() => {})
            case 'ok':
              return Promise.resolve({ ok: true, status: 204, retryAfter: null })
            default:
              return Promise.resolve({ ok: true, status: 503, retryAfter: null })
          }
        })
        const target = new WebhookDestination({
          webhooks: [{ url: 'http://127.0.0.1:9/' }, { url: 'http://127.0.0.1:9/b' }],
          transport,
          timeoutMs: 20,
          retryWindowMs: 100,
          backoff: () => 5,
        })
        const result = await target.deliver(track)
        await target.close({ timeout: 1_000 })
        expect(['delivered', 'failed']).toContain(result.status)
      }),
      { numRuns: 40 },
    )
  }, 20_000)
})

describe('listeners that throw, reject or call back into the destination', () => {
  it('finishes a delivery whose listeners throw or return rejected promises, and reports them to the console', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {})
    const sink = await receiver((_request, index) => ({ status: index === 0 ? 500 : 200 }))
    const target = destination({ webhooks: [{ url: sink.url }], backoff: () => 5 })
    for (const name of ['attempt', 'retry', 'delivered', 'failed'] as const) {
      target.on(name, () => {
        throw new Error(`sync ${name}`)
      })
      // biome-ignore lint/nursery/noMisusedPromises: a listener that rejects is what is tested.
      target.on(name, async () => {
        throw new Error(`async ${name}`)
      })
    }
    const result = await target.deliver(track)
    expect(result.status).toBe('delivered')
    // attempt x2, retry x1, delivered x1; each with a sync and an async listener.
    await vi.waitFor(() => expect(logged).toHaveBeenCalledTimes(8))
  }, 5_000)

  it('delivers an event given to deliver() from inside an attempt listener', async () => {
    const sink = await receiver()
    const target = destination({ webhooks: [{ url: sink.url }] })
    let inner: Promise<DeliveryResult> | undefined
    target.on('attempt', () => {
      inner ??= target.deliver({ type: 'identify', userId: 'u2' })
    })
    expect((await target.deliver(track)).status).toBe('delivered')
    expect((await inner)?.status).toBe('delivered')
    expect(sink.requests).toHaveLength(2)
  }, 5_000)

  it('sends nothing more after close() is called from inside a retry listener', async () => {
    const transport = scriptedTransport(async () => ({ ok: true, status: 503, retryAfter: null }))
    const target = destination({ webhooks: [{ url: 'http://127.0.0.1:9/' }], transport, backoff: () => 5 })
    let closed: Promise<void> | undefined
    target.on('retry', () => {
      closed ??= target.close()
    })
    const result = await target.deliver(track)
    await closed
    expect(result.status).toBe('failed')
    expect(result.urls[0]?.lastError?.code).toBe('ERR_CLOSED')
    expect(target.pendingRetries).toBe(0)
    expect(transport.calls).toBe(1)
  }, 5_000)

  it('refuses deliver() from inside a failed listener that runs during close()', async () => {
    const transport = scriptedTransport(async () => ({ ok: true, status: 503, retryAfter: null }))
    const target = destination({ webhooks: [{ url: 'http://127.0.0.1:9/' }], transport, backoff: () => 60_000 })
    let refused: Promise<unknown> | undefined
    target.on('failed', () => {
      refused = target.deliver(track).catch((error: unknown) => error)
    })
    const pending = target.deliver(track)
    await vi.waitFor(() => expect(target.pendingRetries).toBe(1))
    await target.close()
    expect((await pending).status).toBe('failed')
    expect(await refused).toMatchObject({ code: 'ERR_CLOSED' })
  }, 5_000)
})

describe('a platform signer that throws, rejects, returns garbage or never answers', () => {
  const platform = (signer: () => string | Promise<string>): WebhookPlatform => ({
    transport: () => ({ send: async () => ({ ok: true, status: 200, retryAfter: null }) }),
    signer: () => signer,
  })
  const cases: Array<[string, () => string | Promise<string>]> = [
    [
      'throws',
      () => {
        throw new Error('no key')
      },
    ],
    ['rejects', () => Promise.reject(new Error('no key'))],
    ['returns a value that is not a header value', () => 'abc\r\nX-Injected: 1'],
    ['resolves a number', () => Promise.resolve(42 as unknown as string)],
    ['never settles', () => new Promise<string>(() => {})],
  ]

  it.each(cases)(
    'resolves deliver() failed with ERR_CALLBACK when the signer %s, and sends nothing',
    async (_name, signer) => {
      const attempts: unknown[] = []
      const failed: DeliveryResult[] = []
      const target = new WebhookDestinationBase(
        { webhooks: [{ url: 'http://127.0.0.1:9/' }], sharedSecret: 's', timeoutMs: 50 },
        platform(signer),
      )
      destinations.push(target)
      target.on('attempt', (notice) => attempts.push(notice))
      target.on('failed', (result) => failed.push(result))
      const result = await target.deliver(track)
      expect(result.status).toBe('failed')
      expect(failed).toEqual([result])
      expect(result.urls[0]?.attempts).toBe(0)
      expect(result.urls[0]?.lastError?.code).toBe('ERR_CALLBACK')
      expect(result.urls[0]?.lastError?.message).toMatch(/signer/)
      expect(attempts).toEqual([])
    },
    5_000,
  )
})

describe('a platform signer that fails when a waiting event is signed again for its retry', () => {
  // An event with one URL lets its signature go while it waits, and has it made again when due.
  const failures: Array<[string, () => string | Promise<string>]> = [
    [
      'throws',
      () => {
        throw new Error('key gone')
      },
    ],
    ['rejects', () => Promise.reject(new Error('key gone'))],
    ['never settles', () => new Promise<string>(() => {})],
  ]

  function retrying(signer: (call: number) => string | Promise<string>, urls = 1) {
    const transport = scriptedTransport(async (call) => ({
      ok: true,
      status: call === 0 ? 503 : 200,
      retryAfter: null,
    }))
    let calls = 0
    const target = new WebhookDestinationBase(
      {
        webhooks: Array.from({ length: urls }, (_, index) => ({ url: `http://127.0.0.1:9/${index}` })),
        mode: 'each',
        sharedSecret: 's',
        timeoutMs: 50,
        backoff: () => 10,
      },
      { transport: () => transport, signer: () => () => signer(calls++) },
    )
    destinations.push(target)
    return { target, transport }
  }

  it.each(failures)(
    'ends the URL with ERR_CALLBACK when the signer %s, sending nothing more',
    async (_name, fail) => {
      const { target, transport } = retrying((call) => (call === 0 ? 'first' : fail()))
      const result = await target.deliver(track)
      expect(result.status).toBe('failed')
      expect(result.urls[0]).toMatchObject({ status: 'failed', attempts: 1, lastStatus: 503 })
      // As when backoff fails it: the signer's fault, with the URL's last status.
      expect(result.urls[0]?.lastError).toMatchObject({ code: 'ERR_CALLBACK', status: 503 })
      expect(result.urls[0]?.lastError?.message).toMatch(/signer failed .* got no further request/)
      expect(transport.calls).toBe(1)
    },
    5_000,
  )

  it('is not asked again for an event with several URLs: it keeps its signature while one URL waits', async () => {
    const signed: number[] = []
    const { target, transport } = retrying((call) => {
      signed.push(call)
      return 'kept'
    }, 2)
    const result = await target.deliver(track)
    expect(result.status).toBe('delivered')
    expect(transport.calls).toBe(3)
    expect(signed).toEqual([0])
  }, 5_000)

  it('ends a retry whose new signature comes after close() began with ERR_CLOSED, unsent', async () => {
    let answer: ((signature: string) => void) | undefined
    const { target, transport } = retrying((call) =>
      call === 0 ? 'first' : new Promise<string>((resolve) => (answer = resolve)),
    )
    const pending = target.deliver(track)
    await vi.waitFor(() => expect(answer).toBeDefined())
    // Signing, the URL still counts as waiting.
    expect(target.backlog()[0]).toMatchObject({ queued: 0, retrying: 1, inFlight: 0 })
    expect(target.pendingRetries).toBe(1)
    const closing = target.close({ timeout: 1_000 })
    answer?.('second')
    const result = await pending
    await closing
    expect(result.urls[0]).toMatchObject({ status: 'failed', attempts: 1 })
    expect(result.urls[0]?.lastError).toMatchObject({
      code: 'ERR_CLOSED',
      cause: { code: 'ERR_HTTP_STATUS', status: 503 },
    })
    expect(transport.calls).toBe(1)
    expect(target.backlog()[0]).toMatchObject({ queued: 0, retrying: 0, inFlight: 0 })
    expect(target.pendingRetries).toBe(0)
  }, 5_000)
})
