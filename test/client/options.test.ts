import { describe, expect, it } from 'vitest'
import { Client, OptionsError, type ClientOptions } from '../../src/index.js'
import { resolveClientOptions } from '../../src/client/options.js'
import { OTHER_CLIENTS_NAMES } from '../../src/client/other-clients-names.js'

function optionOf(action: () => unknown): string | undefined {
  try {
    action()
  } catch (error) {
    expect(error).toBeInstanceOf(OptionsError)
    expect((error as OptionsError).code).toBe('ERR_INVALID_OPTION')
    return (error as OptionsError).option
  }
  return undefined
}

describe('Client options', () => {
  it('fills in the documented defaults', () => {
    const resolved = resolveClientOptions('key', {})
    expect(resolved).toMatchObject({
      batchUrl: 'https://api.segment.io/v1/batch',
      flushAt: 20,
      flushAfter: 5_000,
      timeout: 10_000,
      maxConcurrentRequests: 1,
      maxQueueSize: 250_000,
      maxQueueBytes: 256 * 1024 * 1024,
      highWaterBytes: 8 * 1024 * 1024,
      retry: { limit: 10, baseDelay: 100, maxDelay: 10_000, maxRetryAfter: 60_000 },
    })
  })

  it('appends /v1/batch to the endpoint, with or without a path or trailing slash', () => {
    expect(resolveClientOptions('k', { endpoint: 'http://127.0.0.1:8080' }).batchUrl).toBe(
      'http://127.0.0.1:8080/v1/batch',
    )
    expect(resolveClientOptions('k', { endpoint: 'https://x.test/ingest/' }).batchUrl).toBe(
      'https://x.test/ingest/v1/batch',
    )
  })

  it('refuses an option it does not know, naming ours where another client calls it differently', () => {
    const attempt = (options: Record<string, unknown>) => () =>
      resolveClientOptions('k', options, { otherNames: OTHER_CLIENTS_NAMES })
    expect(attempt({ host: 'http://127.0.0.1:8787' })).toThrow(
      'Invalid option `host`: no such option; use `endpoint` instead.',
    )
    expect(attempt({ flushInterval: 1_000 })).toThrow('use `flushAfter` instead')
    expect(attempt({ flushAfterr: 1_000 })).toThrow(
      /Invalid option `flushAfterr`: no such option; the options are endpoint, flushAt, .*flushOnPageHide, storeOnPageHide, writeKeyIn, waitUntil, compression, compressionThreshold, planCheck, defaultContext, middleware, plan\./,
    )
    expect(attempt({ retry: { limits: 3 } })).toThrow(
      /Invalid option `retry.limits`: no such option; the options are limit, baseDelay/,
    )
    expect(optionOf(attempt({ host: 'x' }))).toBe('host')
  })

  it('refuses a value that is not one of the choices, listing them and showing what was given', () => {
    const attempt = (options: Record<string, unknown>) => () => resolveClientOptions('k', options)
    expect(attempt({ writeKeyIn: 'query' })).toThrow(
      "Invalid option `writeKeyIn`: expected 'header' or 'body', got the string \"query\".",
    )
    expect(attempt({ planCheck: 1 })).toThrow(
      "Invalid option `planCheck`: expected 'refuse', 'report' or 'off', got 1.",
    )
  })

  it('refuses an endpoint that already ends in /v1/batch, naming the base URL to use', () => {
    expect(() => resolveClientOptions('k', { endpoint: 'http://127.0.0.1:8787/v1/batch' })).toThrow(
      'expected the base URL, since /v1/batch is appended to it: "http://127.0.0.1:8787".',
    )
  })

  it.each([
    ['https://x.test/v1', '"https://x.test"'],
    ['https://x.test/v1/', '"https://x.test"'],
    ['https://x.test/ingest/v1', '"https://x.test/ingest"'],
    ['https://x.test/ingest/v1/batch/', '"https://x.test/ingest"'],
  ])('refuses the endpoint %s (it would post to /v1/v1/batch), naming %s', (endpoint, base) => {
    expect(() => resolveClientOptions('k', { endpoint })).toThrow(
      `expected the base URL, since /v1/batch is appended to it: ${base}.`,
    )
  })

  it('keeps a path that only contains v1 elsewhere', () => {
    expect(resolveClientOptions('k', { endpoint: 'https://x.test/v1x' }).batchUrl).toBe('https://x.test/v1x/v1/batch')
    expect(resolveClientOptions('k', { endpoint: 'https://x.test/v1/in' }).batchUrl).toBe(
      'https://x.test/v1/in/v1/batch',
    )
  })

  it("answers Segment's constructor shape, new Client({ writeKey }), with where the write key goes", () => {
    const segmentShape = () => new Client({ writeKey: 'KEY' } as never)
    expect(optionOf(segmentShape)).toBe('writeKey')
    expect(segmentShape).toThrow(
      "Invalid option `writeKey`: expected a string, got an object with a writeKey; pass the write key first: `new Client('WRITE_KEY', options)`.",
    )
    expect(() => new Client('k', { writeKey: 'KEY' } as never)).toThrow(
      "Invalid option `writeKey`: no such option; pass the write key first: `new Client('WRITE_KEY', options)`.",
    )
  })

  it.each([
    ['Endpoint', 'endpoint'],
    ['Interval', 'flushAfter'],
    ['Size', 'flushAt'],
    ['BatchSize', 'flushAt'],
    ['Verbose', 'verbose'],
    ['Logger', 'logger'],
    ['DefaultContext', 'defaultContext'],
    ['Transport', 'fetch'],
    ['MaxRetries', 'retry: { limit }'],
    ['RetryAfter', 'retry: { baseDelay, maxDelay }'],
  ])("names ours for the Go client's %s: %s", (goName, ours) => {
    expect(() => new Client('k', { [goName]: 1 } as never)).toThrow(
      `Invalid option \`${goName}\`: no such option; use \`${ours}\` instead.`,
    )
  })

  it("says where the Go client's Callback went: the events, or a call's own callback", () => {
    expect(() => new Client('k', { Callback: {} } as never)).toThrow(
      "Invalid option `Callback`: no such option; use `client.on('sent' | 'error')` or a call's own callback.",
    )
  })

  it('shows a number given as a string as a string', () => {
    expect(() => resolveClientOptions('k', { flushAt: '20' as never })).toThrow('got the string "20".')
  })

  it('caps the high-water mark at half of maxQueueBytes', () => {
    expect(resolveClientOptions('k', { maxQueueBytes: 100_000 }).highWaterBytes).toBe(50_000)
    expect(resolveClientOptions('k', { highWaterMark: 1_000 }).highWaterBytes).toBe(1_000)
  })

  it('treats an option set to undefined as left out (exactOptionalPropertyTypes users pass process.env values)', () => {
    const unset = {
      endpoint: undefined,
      flushAt: undefined,
      size: undefined,
      flushAfter: undefined,
      timeout: undefined,
      retry: { limit: undefined, baseDelay: undefined, maxDelay: undefined, maxRetryAfter: undefined },
      maxConcurrentRequests: undefined,
      maxQueueSize: undefined,
      maxQueueBytes: undefined,
      highWaterMark: undefined,
      logger: undefined,
      verbose: undefined,
      fetch: undefined,
      flushOnPageHide: undefined,
      storeOnPageHide: undefined,
      writeKeyIn: undefined,
      waitUntil: undefined,
      compression: undefined,
      compressionThreshold: undefined,
      planCheck: undefined,
      defaultContext: undefined,
      proxy: undefined,
    } satisfies Required<ClientOptions>
    const { logger: _logger, ...defaults } = resolveClientOptions('k', {})
    expect(resolveClientOptions('k', unset)).toMatchObject(defaults)
    expect(resolveClientOptions('k', { retry: undefined }).retry).toEqual(defaults.retry)
    expect(() => new Client('k', unset).close({ timeout: undefined })).not.toThrow()
  })

  it('takes size as an alias of flushAt', () => {
    expect(resolveClientOptions('k', { size: 1 }).flushAt).toBe(1)
    expect(resolveClientOptions('k', { size: 7, flushAt: 7 }).flushAt).toBe(7)
  })

  it.each<[string, () => unknown, string]>([
    ['an empty write key', () => new Client(''), 'writeKey'],
    ['a non-string write key', () => new Client(42 as never), 'writeKey'],
    ['a relative endpoint', () => new Client('k', { endpoint: '/v1' }), 'endpoint'],
    ['an ftp endpoint', () => new Client('k', { endpoint: 'ftp://x.test' }), 'endpoint'],
    ['an endpoint with a query', () => new Client('k', { endpoint: 'https://x.test/?a=1' }), 'endpoint'],
    ['flushAt 0', () => new Client('k', { flushAt: 0 }), 'flushAt'],
    ['flushAt 2.5', () => new Client('k', { flushAt: 2.5 }), 'flushAt'],
    ['size and flushAt that disagree', () => new Client('k', { flushAt: 5, size: 6 }), 'size'],
    ['a negative flushAfter', () => new Client('k', { flushAfter: -1 }), 'flushAfter'],
    ['a string timeout', () => new Client('k', { timeout: '10s' as never }), 'timeout'],
    ['a negative retry limit', () => new Client('k', { retry: { limit: -1 } }), 'retry.limit'],
    ['a non-object retry', () => new Client('k', { retry: 3 as never }), 'retry'],
    ['zero concurrent requests', () => new Client('k', { maxConcurrentRequests: 0 }), 'maxConcurrentRequests'],
    ['a queue smaller than one message', () => new Client('k', { maxQueueBytes: 1000 }), 'maxQueueBytes'],
    ['a zero high-water mark', () => new Client('k', { highWaterMark: 0 }), 'highWaterMark'],
    ['a logger without error()', () => new Client('k', { logger: { log() {} } as never }), 'logger'],
    ['a non-boolean verbose', () => new Client('k', { verbose: 'yes' as never }), 'verbose'],
    ['a non-function fetch', () => new Client('k', { fetch: {} as never }), 'fetch'],
    ['an unknown compression', () => new Client('k', { compression: 'br' as never }), 'compression'],
    ['compression true', () => new Client('k', { compression: true as never }), 'compression'],
    ['a negative threshold', () => new Client('k', { compressionThreshold: -1 }), 'compressionThreshold'],
    ['a threshold past 500 KB', () => new Client('k', { compressionThreshold: 500_001 }), 'compressionThreshold'],
  ])('rejects %s at construction with a typed error naming the option', (_name, construct, option) => {
    expect(optionOf(construct)).toBe(option)
  })

  it('rejects a negative close timeout', () => {
    const client = new Client('k')
    expect(optionOf(() => client.close({ timeout: -5 }))).toBe('timeout')
  })
})
