// What a URL's failures cost while deliveries wait: a failure alike to the URL's last one is kept
// as that one, so a hundred thousand deliveries failed by one dead receiver hold one error, not a
// hundred thousand stack traces. Alike means the same code, status, callback and a cause of the
// same class, message and code; anything else keeps its own.
import { afterEach, describe, expect, it } from 'vitest'
import { sharedFailure, type AttemptFailure } from '../../src/webhook/delivery/failure.js'
import { WebhookDestination, type WebhookResponse, type WebhookTransport } from '../../src/webhook/index.js'

const refused = (port = 1) =>
  Object.assign(new Error(`connect ECONNREFUSED 127.0.0.1:${port}`), { code: 'ECONNREFUSED' })

describe('sharedFailure', () => {
  it('keeps the last failure for one that says the same, and the new one otherwise', () => {
    const last: AttemptFailure = { code: 'ERR_NETWORK', cause: refused() }
    expect(sharedFailure({ code: 'ERR_NETWORK', cause: refused() }, last)).toBe(last)
    const wrapped = () =>
      Object.assign(new Error('fetch failed', { cause: 'socket hang up' }), { code: 'UND_ERR_SOCKET' })
    const lastWrapped: AttemptFailure = { code: 'ERR_NETWORK', cause: wrapped() }
    expect(sharedFailure({ code: 'ERR_NETWORK', cause: wrapped() }, lastWrapped)).toBe(lastWrapped)
    const status: AttemptFailure = { code: 'ERR_HTTP_STATUS', status: 503 }
    expect(sharedFailure({ code: 'ERR_HTTP_STATUS', status: 503 }, status)).toBe(status)

    const differing: AttemptFailure[] = [
      { code: 'ERR_TIMEOUT', cause: refused() },
      { code: 'ERR_NETWORK', cause: refused(2) },
      { code: 'ERR_NETWORK', cause: Object.assign(refused(), { code: 'ECONNRESET' }) },
      {
        code: 'ERR_NETWORK',
        cause: Object.assign(new TypeError(`connect ECONNREFUSED 127.0.0.1:1`), { code: 'ECONNREFUSED' }),
      },
      {
        code: 'ERR_NETWORK',
        cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1', { cause: 'inner' }), {
          code: 'ECONNREFUSED',
        }),
      },
      { code: 'ERR_NETWORK' },
      { code: 'ERR_NETWORK', cause: 'connect ECONNREFUSED 127.0.0.1:1' },
    ]
    for (const failure of differing) expect(sharedFailure(failure, last)).toBe(failure)
    expect(sharedFailure({ code: 'ERR_HTTP_STATUS', status: 500 }, status)).not.toBe(status)
    const signer: AttemptFailure = { code: 'ERR_CALLBACK', callback: 'signer' }
    expect(sharedFailure({ code: 'ERR_CALLBACK', callback: 'backoff' }, signer)).not.toBe(signer)
    const fresh: AttemptFailure = { code: 'ERR_NETWORK', cause: refused() }
    expect(sharedFailure(fresh, undefined)).toBe(fresh)
  })

  it('reads causes as data: a getter is not called, and a proxy that throws is a cause of its own', () => {
    let calls = 0
    const withGetter = () =>
      Object.defineProperty(new Error('x'), 'code', {
        get: () => {
          calls++
          return 'E'
        },
      })
    const last: AttemptFailure = { code: 'ERR_NETWORK', cause: withGetter() }
    const next: AttemptFailure = { code: 'ERR_NETWORK', cause: withGetter() }
    expect(sharedFailure(next, last)).toBe(next)
    expect(calls).toBe(0)

    const hostile = new Proxy(new Error('x'), {
      getOwnPropertyDescriptor: () => {
        throw new Error('trap')
      },
    })
    const fromProxy: AttemptFailure = { code: 'ERR_NETWORK', cause: hostile }
    expect(sharedFailure(fromProxy, { code: 'ERR_NETWORK', cause: new Error('x') })).toBe(fromProxy)

    // A revoked proxy throws on every question, `instanceof` included.
    const revoked = () => {
      const { proxy, revoke } = Proxy.revocable({}, {})
      revoke()
      return proxy
    }
    const first: AttemptFailure = { code: 'ERR_NETWORK', cause: revoked() }
    const second: AttemptFailure = { code: 'ERR_NETWORK', cause: revoked() }
    expect(sharedFailure(second, first)).toBe(second)
    expect(sharedFailure(first, { code: 'ERR_NETWORK', cause: new Error('x') })).toBe(first)
  })
})

describe('deliveries failed alike at one URL', () => {
  const destinations: WebhookDestination[] = []
  afterEach(async () => {
    await Promise.all(destinations.splice(0).map((destination) => destination.close({ timeout: 100 })))
  })

  it("end, however hostile the cause a transport of the user's gives, and report it", async () => {
    const transport: WebhookTransport = {
      send: async (): Promise<WebhookResponse> => {
        const { proxy, revoke } = Proxy.revocable({}, {})
        revoke()
        return { ok: false, failure: 'network', cause: proxy }
      },
    }
    const destination = new WebhookDestination({
      webhooks: [{ url: 'https://a.test/' }],
      transport,
      breaker: false,
      backoff: () => 0,
      retryWindowMs: 50,
    })
    destinations.push(destination)
    const result = await destination.deliver({ type: 'track', userId: 'u', event: 'E' })
    expect(result.status).toBe('failed')
    expect(result.attempts).toBeGreaterThan(1)
    expect(result.urls[0]?.lastError?.code).toBe('ERR_NETWORK')
  })

  it('report the one error the first of them kept, and a different failure reports its own', async () => {
    let port = 1
    const transport: WebhookTransport = {
      // A fresh error per attempt, as a real connection refused gives. TLS failures are not retried.
      send: async (): Promise<WebhookResponse> => ({ ok: false, failure: 'tls', cause: refused(port) }),
    }
    const destination = new WebhookDestination({ webhooks: [{ url: 'https://a.test/' }], transport, breaker: false })
    destinations.push(destination)
    const track = { type: 'track' as const, userId: 'u', event: 'E' }
    const first = await destination.deliver(track)
    const second = await destination.deliver(track)
    port = 2
    const third = await destination.deliver(track)
    const causeOf = (result: typeof first) => result.urls[0]?.lastError?.cause
    expect(causeOf(first)).toBeInstanceOf(Error)
    expect(causeOf(second)).toBe(causeOf(first))
    expect((causeOf(third) as Error).message).toBe('connect ECONNREFUSED 127.0.0.1:2')
  })
})
