import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ClientBase } from '../../src/client/client-base.js'
import { createFetchTransport } from '../../src/client/fetch-transport.js'
import { createKyTransport } from '../../src/client/ky-transport.js'
import type { TransportFactory } from '../../src/client/transport.js'
import { Client, type ClientOptions, type DeliveryError } from '../../src/index.js'

// A `fetch` option that resolves something that is not a Response, as test doubles do: each
// message still gets one outcome, ERR_INVALID_RESPONSE after one attempt (the code given is at
// fault: a retry cannot fix it), nothing rejects unheard, and close() resolves.

/** A client over one transport, with the `fetch` option given. */
function clientWith(create: TransportFactory) {
  return class extends ClientBase {
    constructor(writeKey: string, options: ClientOptions) {
      super(writeKey, options, create, undefined)
    }
  }
}

const CLIENTS = [
  ['Node build (ky over the fetch option)', Client],
  ['ky transport', clientWith(createKyTransport)],
  ['fetch transport (browsers)', clientWith(createFetchTransport)],
] as const

const NOT_RESPONSES: ReadonlyArray<readonly [string, unknown]> = [
  ['a plain object with ok, status and headers', { ok: false, status: 503, headers: {} }],
  ['{ status: 200 }', { status: 200 }],
  ['undefined', undefined],
  ['null', null],
  ['a string', 'OK'],
  [
    'a Response-like object without headers.get',
    { ok: true, status: 200, headers: { 'content-type': 'application/json' } },
  ],
  ['a status that is not an integer', { ok: true, status: '200', headers: new Headers() }],
]

const unhandled: unknown[] = []
const onUnhandled = (reason: unknown) => unhandled.push(reason)
beforeEach(() => {
  unhandled.length = 0
  process.on('unhandledRejection', onUnhandled)
})
afterEach(() => {
  process.off('unhandledRejection', onUnhandled)
})

describe.each(CLIENTS)('%s', (_name, Made) => {
  it.each<readonly [string, () => unknown]>([
    ['a null-prototype object', () => Object.create(null)],
    [
      'an Error whose message getter throws',
      () =>
        Object.defineProperty(new Error(), 'message', {
          get() {
            throw new Error('no message')
          },
        }),
    ],
  ])('a fetch that throws %s: the outcome still says what happened, nothing crashes', async (_what, make) => {
    const fetch = (async () => {
      throw make()
    }) as unknown as typeof globalThis.fetch
    const client = new Made('key', { endpoint: 'https://ingest.test', fetch, retry: { limit: 0 } })
    const errors: DeliveryError[] = []
    client.on('error', (error) => errors.push(error))
    client.track({ userId: 'u1', event: 'E' })
    await expect(client.close({ timeout: 5_000 })).resolves.toBeUndefined()
    expect(errors.map((error) => error.code)).toEqual(['ERR_RETRIES_EXHAUSTED'])
    expect(errors[0]?.message).toContain('a value that cannot be shown')
    await new Promise((resolve) => setImmediate(resolve))
    expect(unhandled).toEqual([])
  })

  it.each(NOT_RESPONSES)('a fetch that resolves %s: ERR_INVALID_RESPONSE after one attempt', async (_what, value) => {
    let calls = 0
    const fetch = (async () => {
      calls++
      return value
    }) as unknown as typeof globalThis.fetch
    const client = new Made('key', { endpoint: 'https://ingest.test', fetch, retry: { baseDelay: 1 } })
    const errors: DeliveryError[] = []
    client.on('error', (error) => errors.push(error))
    const outcomes: unknown[] = []
    client.track({ userId: 'u1', event: 'E' }, (error) => outcomes.push(error?.code))
    await expect(client.close({ timeout: 5_000 })).resolves.toBeUndefined()
    expect(outcomes).toEqual(['ERR_INVALID_RESPONSE'])
    expect(errors[0]).toMatchObject({ code: 'ERR_INVALID_RESPONSE', attempts: 1, status: undefined })
    expect(errors[0]?.message).toContain('not a Response')
    expect(calls).toBe(1)
    // Whatever was left to settle has settled: a rejection nobody handled would be here by now.
    await new Promise((resolve) => setImmediate(resolve))
    expect(unhandled).toEqual([])
  })

  it('a fetch that throws a non-Error is a failed attempt, retried, then ERR_RETRIES_EXHAUSTED', async () => {
    const fetch = (async () => {
      throw 'refused'
    }) as unknown as typeof globalThis.fetch
    const client = new Made('key', { endpoint: 'https://ingest.test', fetch, retry: { limit: 2, baseDelay: 1 } })
    const outcomes: unknown[] = []
    client.track({ userId: 'u1', event: 'E' }, (error) => outcomes.push(error?.code))
    await client.close({ timeout: 5_000 })
    expect(outcomes).toEqual(['ERR_RETRIES_EXHAUSTED'])
    expect(unhandled).toEqual([])
  })
})
