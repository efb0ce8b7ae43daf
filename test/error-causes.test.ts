import { describe, expect, it } from 'vitest'
import { describeError } from '../src/core/describe-error.js'
import { Client, type DeliveryError } from '../src/index.js'
import { createFetchTransport, WebhookDestination } from '../src/webhook/node.js'
import { runCli } from './helpers/cli.js'
import { freePort } from './helpers/ports.js'

/** A loopback URL where nothing listens: connecting is refused at once. */
async function refusingUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}`
}

describe('describeError', () => {
  it('follows cause to the system error that fetch hides behind "fetch failed"', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1234'), { code: 'ECONNREFUSED' })
    expect(describeError(new TypeError('fetch failed', { cause: refused }))).toBe('TypeError: fetch failed: connect ECONNREFUSED 127.0.0.1:1234')
  })

  it('names the code of an AggregateError with no message (one connect attempt per address)', () => {
    const attempts = new AggregateError([Object.assign(new Error('connect ECONNREFUSED ::1:80'), { code: 'ECONNREFUSED' })], '')
    expect(describeError(new TypeError('fetch failed', { cause: Object.assign(attempts, { code: 'ECONNREFUSED' }) }))).toBe(
      'TypeError: fetch failed: connect ECONNREFUSED ::1:80',
    )
  })

  it('adds a code the message lacks, stops on a cycle, and takes non-errors as text', () => {
    const looping: Error & { cause?: unknown } = Object.assign(new Error('getaddrinfo failed'), { code: 'ENOTFOUND' })
    looping.cause = looping
    expect(describeError(looping)).toBe('getaddrinfo failed (ENOTFOUND)')
    expect(describeError('plain')).toBe('plain')
  })
})

describe('a refused connection is named as such', () => {
  it("in the client's DeliveryError and its debug log", async () => {
    const lines: string[] = []
    const client = new Client('k', {
      endpoint: await refusingUrl(),
      retry: { limit: 1, baseDelay: 1 },
      verbose: true,
      logger: { log: (line) => lines.push(line), error: (line) => lines.push(line) },
    })
    const errors: DeliveryError[] = []
    client.on('error', (error) => errors.push(error))
    client.track({ userId: 'u1', event: 'E' })
    await client.close()
    expect(errors.map((error) => error.code)).toEqual(['ERR_RETRIES_EXHAUSTED'])
    expect(errors[0]?.message).toMatch(/fetch failed: .*ECONNREFUSED/)
    expect(lines.find((line) => line.startsWith('retrying'))).toMatch(/ECONNREFUSED/)
  })

  it('in the ERR_CLOSE_TIMEOUT of a close() that ran out of time while retrying', async () => {
    const client = new Client('k', { endpoint: await refusingUrl(), retry: { baseDelay: 60_000, maxDelay: 60_000 } })
    const errors: DeliveryError[] = []
    client.on('error', (error) => errors.push(error))
    client.track({ userId: 'u1', event: 'E' })
    await client.close({ timeout: 300 })
    expect(errors.map((error) => error.code)).toEqual(['ERR_CLOSE_TIMEOUT'])
    expect(errors[0]?.message).toMatch(/close\(\) timed out .*; the last failed attempt: TypeError: fetch failed: .*ECONNREFUSED/)
    expect(errors[0]?.cause).toBeInstanceOf(TypeError)
  })

  it("in a webhook attempt's lastError over fetch", async () => {
    const destination = new WebhookDestination({ webhooks: [{ url: await refusingUrl() }], transport: createFetchTransport(), retryWindowMs: 0 })
    const result = await destination.deliver({ type: 'track', userId: 'u1', event: 'E' })
    await destination.close()
    expect(result.urls[0]?.lastError?.code).toBe('ERR_NETWORK')
    expect(result.urls[0]?.lastError?.message).toMatch(/ECONNREFUSED/)
  })

  it('in what eventwire send prints', async () => {
    const { code, stderr } = await runCli(['send', 'track', '--endpoint', await refusingUrl(), '--write-key', 'k', '--user', 'u1', '--event', 'E', '--retries', '0'])
    expect(code).toBe(1)
    expect(stderr).toMatch(/ECONNREFUSED/)
  })
})
