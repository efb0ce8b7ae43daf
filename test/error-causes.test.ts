import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { describeError } from '../src/core/describe-error.js'
import type { Client, DeliveryError } from '../src/index.js'
import { CLIENT_BUILDS } from './helpers/builds.js'
import { createFetchTransport, WebhookDestination } from '../src/webhook/index.js'
import { runCli, sendTrackArgs } from './helpers/cli.js'
import { freePort } from './helpers/ports.js'

/** A loopback URL where nothing listens: connecting is refused at once. */
async function refusingUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}`
}

describe('describeError', () => {
  it('follows cause to the system error that fetch hides behind "fetch failed"', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1234'), { code: 'ECONNREFUSED' })
    expect(describeError(new TypeError('fetch failed', { cause: refused }))).toBe(
      'TypeError: fetch failed: connect ECONNREFUSED 127.0.0.1:1234',
    )
  })

  it('names the code of an AggregateError with no message (one connect attempt per address)', () => {
    const attempts = new AggregateError(
      [Object.assign(new Error('connect ECONNREFUSED ::1:80'), { code: 'ECONNREFUSED' })],
      '',
    )
    expect(
      describeError(new TypeError('fetch failed', { cause: Object.assign(attempts, { code: 'ECONNREFUSED' }) })),
    ).toBe('TypeError: fetch failed: connect ECONNREFUSED ::1:80')
  })

  it('adds a code the message lacks, stops on a cycle, and takes non-errors as text', () => {
    const looping: Error & { cause?: unknown } = Object.assign(new Error('getaddrinfo failed'), { code: 'ENOTFOUND' })
    looping.cause = looping
    expect(describeError(looping)).toBe('getaddrinfo failed (ENOTFOUND)')
    expect(describeError('plain')).toBe('plain')
  })
})

/** How each platform names a refused connection: fetch hides the reason behind "fetch failed". */
const REFUSED = {
  'web platform (ky over fetch)': {
    text: /fetch failed: .*ECONNREFUSED/,
    cause: { name: 'TypeError', message: 'fetch failed' },
  },
  'Node platform (HTTP/1.1 stack)': { text: /connect ECONNREFUSED/, cause: { code: 'ECONNREFUSED' } },
} as const

describe.each(CLIENT_BUILDS)('a refused connection is named as such by the %s', (build, Client) => {
  const refused = REFUSED[build as keyof typeof REFUSED]

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
    expect(errors[0]?.message).toMatch(refused.text)
    expect(lines.find((line) => line.startsWith('retrying'))).toMatch(/ECONNREFUSED/)
  })

  it('in the ERR_CLOSE_TIMEOUT of a close() that ran out of time while retrying', async () => {
    const client = new Client('k', { endpoint: await refusingUrl(), retry: { baseDelay: 60_000, maxDelay: 60_000 } })
    const errors: DeliveryError[] = []
    client.on('error', (error) => errors.push(error))
    client.track({ userId: 'u1', event: 'E' })
    await client.close({ timeout: 300 })
    expect(errors.map((error) => error.code)).toEqual(['ERR_CLOSE_TIMEOUT'])
    expect(errors[0]?.message).toMatch(/close\(\) timed out .*; the last failed attempt: /)
    expect(errors[0]?.message).toMatch(refused.text)
    expect(errors[0]?.cause).toMatchObject(refused.cause)
  })
})

describe('a refused connection is named as such elsewhere', () => {
  it("in a webhook attempt's lastError over fetch", async () => {
    const destination = new WebhookDestination({
      webhooks: [{ url: await refusingUrl() }],
      transport: createFetchTransport(),
      retryWindowMs: 0,
    })
    const result = await destination.deliver({ type: 'track', userId: 'u1', event: 'E' })
    await destination.close()
    expect(result.urls[0]?.lastError?.code).toBe('ERR_NETWORK')
    expect(result.urls[0]?.lastError?.message).toMatch(/ECONNREFUSED/)
  })

  it('in what eventwire send prints', async () => {
    const { code, stderr } = await runCli(sendTrackArgs(await refusingUrl(), 'k', '--retries', '0'))
    expect(code).toBe(1)
    expect(stderr).toMatch(/ECONNREFUSED/)
  })
})

/** A loopback server that answers every request with `answer`; closed after `use`. */
async function withServer(
  answer: (response: ServerResponse) => void,
  use: (url: string) => Promise<void>,
): Promise<void> {
  const server = createServer((request, response) => {
    request.resume()
    answer(response)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    await use(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
  } finally {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
}

async function rejection(Build: typeof Client, url: string, timeout = 10_000): Promise<DeliveryError | undefined> {
  const client = new Build('k', { endpoint: url, timeout })
  const errors: DeliveryError[] = []
  client.on('error', (error) => errors.push(error))
  client.track({ userId: 'u1', event: 'E' })
  await client.close()
  return errors[0]
}

describe.each(CLIENT_BUILDS)("a batch the server refuses quotes the server's reason, with the %s", (_build, Build) => {
  it('from the response body', async () => {
    await withServer(
      (response) =>
        response
          .writeHead(400, { 'content-type': 'application/json' })
          .end('{"code":"ERR_MISSING_EVENT","error":"batch[0]: track() needs a non-empty `event`."}'),
      async (url) => {
        const error = await rejection(Build, url)
        expect(error?.code).toBe('ERR_REJECTED')
        expect(error?.message).toContain(
          'with HTTP 400 ({"code":"ERR_MISSING_EVENT","error":"batch[0]: track() needs a non-empty `event`."}); not retried.',
        )
      },
    )
  })

  it('cut at 300 characters, without control characters, and within the timeout when the body never ends', async () => {
    await withServer(
      (response) => {
        response.writeHead(401)
        response.write(`\u001b[31m${'x'.repeat(400)}`)
      },
      async (url) => {
        const error = await rejection(Build, url, 500)
        expect(error?.code).toBe('ERR_REJECTED')
        expect(error?.message).toContain(`with HTTP 401 ([31m${'x'.repeat(296)}...); not retried.`)
        expect(error?.message).not.toContain('\u001b')
      },
    )
    await withServer(
      (response) => {
        response.writeHead(403)
        response.write('forbidden, and then nothing more')
      },
      async (url) =>
        expect((await rejection(Build, url, 300))?.message).toContain(
          'with HTTP 403 (forbidden, and then nothing more); not retried.',
        ),
    )
  })
})
