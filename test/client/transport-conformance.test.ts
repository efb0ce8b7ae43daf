import { getEventListeners } from 'node:events'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createFetchTransport } from '../../src/client/fetch-transport.js'
import { createKyTransport } from '../../src/client/ky-transport.js'
import { resolveClientOptions, type RetryOptions } from '../../src/client/options.js'
import type { BatchTransport, SendResult, TransportFactory } from '../../src/client/transport.js'
import { createHttp1Transport } from '../../src/client/http1-transport.js'
import { describeError } from '../../src/core/describe-error.js'
import { RESPONSE_BODY_CAP as RESPONSE_READ_BYTES } from '../../src/core/limits.js'
import { LIBRARY } from '../../src/core/version.js'
import { startHostileReceiver, type HostileReceiver } from '../helpers/hostile-receiver.js'
import { freePort } from '../helpers/ports.js'
import { startRawServer, trickle, writeForever, type RawServer } from '../helpers/raw-server.js'
import { startSink, type Responder, type Sink } from '../helpers/sink.js'
import { senderOver } from '../helpers/transport-sender.js'

// The contract every client transport keeps, run against real HTTP servers on loopback (msw does
// not see undici's Pool): the `fetch` transport (ky) that browsers, Deno, Bun and Workers use, and
// the undici transport of the Node build.

/** A batch body with multi-byte characters: what arrives must be these very bytes. */
const BODY = '{"batch":[{"type":"track","event":"Café ☕ 😀","userId":"ü-1"}],"sentAt":"2024-05-06T10:00:00.000Z"}'

const servers: Array<{ close(): Promise<void> }> = []
const transports: BatchTransport[] = []
afterEach(async () => {
  await Promise.all(transports.splice(0).map((transport) => transport.close?.()))
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

async function sink(respond?: Responder): Promise<Sink> {
  const started = await startSink(respond)
  servers.push(started)
  return started
}

async function raw(...args: Parameters<typeof startRawServer>): Promise<RawServer> {
  const started = await startRawServer(...args)
  servers.push(started)
  return started
}

async function hostile(...args: Parameters<typeof startHostileReceiver>): Promise<HostileReceiver> {
  const started = await startHostileReceiver(...args)
  servers.push(started)
  return started
}

const OK_HEAD = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n'

describe.each<[string, TransportFactory]>([
  ['ky over fetch', createKyTransport],
  ['fetch (browsers)', createFetchTransport],
  ['HTTP/1.1 stack (Node)', createHttp1Transport],
])('the %s transport', (_name, create) => {
  /** A transport to `base` (retry delays of 1 ms unless told), and what it told `onRetry`. */
  function transportTo(
    base: string,
    options: { timeout?: number; retry?: RetryOptions; writeKeyIn?: 'header' | 'body' } = {},
  ) {
    const { retry } = resolveClientOptions('key', { retry: { baseDelay: 1, maxDelay: 1, ...options.retry } })
    const transport = create({
      batchUrl: `${base}/v1/batch`,
      writeKey: 'key',
      writeKeyIn: options.writeKeyIn ?? 'header',
      timeout: options.timeout ?? 5_000,
      fetch: undefined,
      proxy: undefined,
      maxConcurrentRequests: 1,
    })
    transports.push(transport)
    // The client's retry loop over the transport's attempts, as the client runs it.
    const sender = senderOver(transport, retry)
    const retries: Array<{ attempt: number; error: unknown }> = []
    const send = ({
      signal = new AbortController().signal,
      body = BODY,
      keepalive = false,
    } = {}): Promise<SendResult> =>
      sender(body, { signal, onRetry: (attempt, error) => retries.push({ attempt, error }), keepalive })
    return { send, retries }
  }

  const failure = (result: SendResult) => {
    if (result.ok) throw new Error(`expected a failure, got HTTP ${result.status}`)
    return result
  }

  describe('the request', () => {
    it('POSTs the exact body bytes to /v1/batch as JSON, with the write key as Basic auth and User-Agent eventwire/<version>', async () => {
      const server = await sink()
      expect(await transportTo(server.url).send()).toEqual({ ok: true, status: 200, attempts: 1 })
      const [request] = server.requests
      expect(request?.method).toBe('POST')
      expect(request?.path).toBe('/v1/batch')
      expect(request?.headers['content-type']).toBe('application/json')
      expect(request?.headers['authorization']).toBe(`Basic ${Buffer.from('key:').toString('base64')}`)
      expect(request?.headers['user-agent']).toBe(`eventwire/${LIBRARY.version}`)
      expect(request?.raw.equals(Buffer.from(BODY))).toBe(true)
    })

    it('with the write key in the body: plain text (CORS-simple), no Authorization, the same bytes on retry', async () => {
      const server = await sink((_request, index) => ({ status: index === 0 ? 503 : 200 }))
      expect(await transportTo(server.url, { writeKeyIn: 'body' }).send()).toEqual({
        ok: true,
        status: 200,
        attempts: 2,
      })
      for (const request of server.requests) {
        expect(request.headers['content-type']).toBe('text/plain;charset=UTF-8')
        expect(request.headers['authorization']).toBeUndefined()
        expect(request.raw.equals(Buffer.from(BODY))).toBe(true)
      }
    })

    it("leaves no listener on close()'s signal once the attempt is over", async () => {
      const server = await sink((_request, index) => ({ status: index === 0 ? 503 : 200 }))
      const signal = new AbortController().signal
      expect(await transportTo(server.url).send({ signal })).toMatchObject({ ok: true, attempts: 2 })
      expect(getEventListeners(signal, 'abort')).toEqual([])
    })

    it('ignores keepalive (a browser-only flag) and sends as usual', async () => {
      const server = await sink()
      expect(await transportTo(server.url).send({ keepalive: true })).toEqual({ ok: true, status: 200, attempts: 1 })
      expect(server.requests[0]?.raw.equals(Buffer.from(BODY))).toBe(true)
    })
  })

  describe('statuses', () => {
    it.each([200, 201, 202, 204, 299])('%i: delivered after one attempt', async (status) => {
      const server = await sink(() => ({ status }))
      expect(await transportTo(server.url).send()).toEqual({ ok: true, status, attempts: 1 })
      expect(server.requests).toHaveLength(1)
    })

    it.each([408, 429, 500, 502, 503, 504, 599])(
      '%i: retried, with the very same bytes, after telling onRetry',
      async (status) => {
        const server = await sink((_request, index) => ({ status: index === 0 ? status : 200 }))
        const { send, retries } = transportTo(server.url)
        expect(await send()).toEqual({ ok: true, status: 200, attempts: 2 })
        expect(server.requests).toHaveLength(2)
        expect(server.requests[1]?.raw.equals(server.requests[0]?.raw ?? Buffer.alloc(0))).toBe(true)
        expect(retries.map(({ attempt }) => attempt)).toEqual([1])
        expect(retries[0]?.error).toMatchObject({ name: 'HTTPError', response: { status } })
      },
    )

    // HTTP has no status outside 100-599. fetch hands a 600 over as an answer; Node's stack takes it
    // as a broken response, as it takes any other (below).
    it.each(
      create === createHttp1Transport
        ? [400, 401, 403, 404, 409, 413, 422, 451]
        : [400, 401, 403, 404, 409, 413, 422, 451, 600],
    )('%i: ERR_REJECTED after one attempt, quoting the body, with an HTTPError naming the status', async (status) => {
      const server = await sink(() => ({ status, body: `refused: ${status}` }))
      const { send, retries } = transportTo(server.url)
      const result = failure(await send())
      expect(result).toMatchObject({ code: 'ERR_REJECTED', status, attempts: 1, responseText: `refused: ${status}` })
      expect(result.error).toMatchObject({ name: 'HTTPError', response: { status } })
      expect(describeError(result.error)).toContain(String(status))
      expect(describeError(result.error)).toContain(`POST ${server.url}/v1/batch`)
      expect(server.requests).toHaveLength(1)
      expect(retries).toEqual([])
    })

    it.runIf(create === createHttp1Transport)(
      'a status outside 100-599: not an answer; retried as a broken response, and never rejected as one',
      async () => {
        const server = await sink(() => ({ status: 600, body: 'refused: 600' }))
        const result = failure(await transportTo(server.url, { retry: { limit: 1 } }).send())
        expect(result).toMatchObject({ code: 'ERR_RETRIES_EXHAUSTED', attempts: 2 })
        expect(result.status).toBeUndefined()
        expect(describeError(result.error)).toContain('status 600 is outside 100-599')
      },
    )

    it.each([301, 302, 303, 307, 308])(
      'a %i redirect: ERR_REJECTED, never followed (its target would answer 200)',
      async (status) => {
        const server = await sink((request) =>
          request.path === '/v1/batch' ? { status, headers: { location: '/v1/elsewhere' } } : { status: 200 },
        )
        expect(failure(await transportTo(server.url).send())).toMatchObject({ code: 'ERR_REJECTED', status })
        expect(server.requests.map((request) => request.path)).toEqual(['/v1/batch'])
      },
    )

    it('a refusal whose body never ends: ERR_REJECTED within the timeout, quoting its first 300 characters', async () => {
      const server = await raw((socket) => {
        socket.write('HTTP/1.1 400 Bad Request\r\ncontent-length: 100000\r\n\r\n')
        socket.write('\u001b[31m')
        trickle(socket, 'x'.repeat(100), 20)
      })
      const result = failure(await transportTo(server.url, { timeout: 500 }).send())
      expect(result).toMatchObject({ code: 'ERR_REJECTED', status: 400 })
      expect(result.responseText).toBe(`[31m${'x'.repeat(296)}...`)
    })
  })

  describe('the retry budget', () => {
    it('makes 1 + retry.limit attempts, then ERR_RETRIES_EXHAUSTED with the last status and its error', async () => {
      const server = await sink(() => ({ status: 503 }))
      const { send, retries } = transportTo(server.url, { retry: { limit: 3 } })
      const result = failure(await send())
      expect(result).toMatchObject({ code: 'ERR_RETRIES_EXHAUSTED', status: 503, attempts: 4 })
      expect(result.error).toMatchObject({ name: 'HTTPError', response: { status: 503 } })
      expect(server.requests).toHaveLength(4)
      expect(retries.map(({ attempt }) => attempt)).toEqual([1, 2, 3])
    })

    it('retry.limit 0: one attempt', async () => {
      const server = await sink(() => ({ status: 500 }))
      expect(failure(await transportTo(server.url, { retry: { limit: 0 } }).send())).toMatchObject({
        code: 'ERR_RETRIES_EXHAUSTED',
        attempts: 1,
      })
      expect(server.requests).toHaveLength(1)
    })

    it('a connection dropped before any answer is retried', async () => {
      const server = await raw((socket, connection) => {
        if (connection === server.connections[0]) socket.destroy()
        else socket.end(`${OK_HEAD}content-length: 2\r\n\r\n{}`)
      })
      const { send, retries } = transportTo(server.url)
      expect(await send()).toEqual({ ok: true, status: 200, attempts: 2 })
      expect(retries[0]?.error).toBeInstanceOf(Error)
    })

    it('a refused connection: retried, then ERR_RETRIES_EXHAUSTED with an error naming ECONNREFUSED', async () => {
      const { send } = transportTo(`http://127.0.0.1:${await freePort()}`, { retry: { limit: 1 } })
      const result = failure(await send())
      expect(result).toMatchObject({ code: 'ERR_RETRIES_EXHAUSTED', status: undefined, attempts: 2 })
      expect(describeError(result.error)).toMatch(/ECONNREFUSED/)
    })

    it('an answer that is not HTTP: retried, then ERR_RETRIES_EXHAUSTED', async () => {
      const server = await raw((socket) => socket.end('SSH-2.0-OpenSSH_9.6\r\n\r\n'))
      const result = failure(await transportTo(server.url, { retry: { limit: 1 } }).send())
      expect(result).toMatchObject({ code: 'ERR_RETRIES_EXHAUSTED', attempts: 2 })
      expect(server.requests).toBe(2)
    })
  })

  describe('Retry-After', () => {
    /** Milliseconds between the first two requests the server received. */
    const gap = (server: Sink) => (server.requests[1]?.at ?? Number.NaN) - (server.requests[0]?.at ?? Number.NaN)

    it.each([429, 503])('a %i with Retry-After: 1 is retried a second later (backoff is 1 ms)', async (status) => {
      const server = await sink((_request, index) => ({
        status: index === 0 ? status : 200,
        headers: { 'retry-after': '1' },
      }))
      expect(await transportTo(server.url).send()).toMatchObject({ ok: true, attempts: 2 })
      expect(gap(server)).toBeGreaterThanOrEqual(990)
    })

    it('an HTTP date is honoured too', async () => {
      const server = await sink((_request, index) => ({
        status: index === 0 ? 503 : 200,
        headers: { 'retry-after': new Date(Date.now() + 2_000).toUTCString() },
      }))
      expect(await transportTo(server.url).send()).toMatchObject({ ok: true, attempts: 2 })
      // The date has whole seconds: between one and two of them away.
      expect(gap(server)).toBeGreaterThanOrEqual(990)
    })

    it('is capped at retry.maxRetryAfter (an hour asked, 300 ms waited)', async () => {
      const server = await sink((_request, index) => ({
        status: index === 0 ? 429 : 200,
        headers: { 'retry-after': '3600' },
      }))
      expect(await transportTo(server.url, { retry: { maxRetryAfter: 300 } }).send()).toMatchObject({ ok: true })
      expect(gap(server)).toBeGreaterThanOrEqual(290)
      expect(gap(server)).toBeLessThan(60_000)
    })

    it('is honoured on a 500 too: any retried status may hold its retry back', async () => {
      const server = await sink((_request, index) => ({
        status: index === 0 ? 500 : 200,
        headers: { 'retry-after': '1' },
      }))
      expect(await transportTo(server.url).send()).toMatchObject({ ok: true, attempts: 2 })
      expect(gap(server)).toBeGreaterThanOrEqual(990)
    })

    it.each(['-30', '0', '1.5', '0x10'])(
      'an invalid or zero Retry-After (%s) keeps the backoff delay: no retry at once',
      async (header) => {
        const server = await sink((_request, index) => ({
          status: index === 0 ? 503 : 200,
          headers: { 'retry-after': header },
        }))
        expect(await transportTo(server.url, { retry: { baseDelay: 300, maxDelay: 300 } }).send()).toMatchObject({
          ok: true,
          attempts: 2,
        })
        // 300 ms with jitter: 240 at the least.
        expect(gap(server)).toBeGreaterThanOrEqual(230)
      },
    )
  })

  describe('the 429 pause', () => {
    it('a 429 holds back every other send of the transport until its Retry-After has passed', async () => {
      const server = await sink((_request, index) => ({
        status: index === 0 ? 429 : 200,
        headers: { 'retry-after': '1' },
      }))
      const { send } = transportTo(server.url, { retry: { limit: 0 } })
      // Out of retries, the first batch still passes the 429 on.
      expect(failure(await send())).toMatchObject({ code: 'ERR_RETRIES_EXHAUSTED', status: 429 })
      expect(await send({ body: '{"batch":[]}' })).toMatchObject({ ok: true, attempts: 1 })
      expect((server.requests[1]?.at ?? 0) - (server.requests[0]?.at ?? 0)).toBeGreaterThanOrEqual(990)
    })

    it('a 503 holds back no other send', async () => {
      const server = await sink((_request, index) => ({
        status: index === 0 ? 503 : 200,
        headers: { 'retry-after': '3600' },
      }))
      const { send } = transportTo(server.url, { retry: { limit: 0 } })
      expect(failure(await send())).toMatchObject({ code: 'ERR_RETRIES_EXHAUSTED', status: 503 })
      expect(await send({ body: '{"batch":[]}' })).toMatchObject({ ok: true, attempts: 1 })
      expect((server.requests[1]?.at ?? 0) - (server.requests[0]?.at ?? 0)).toBeLessThan(60_000)
    })
  })

  describe('the attempt timeout covers connecting, the headers and the body', () => {
    it('headers that never come: each attempt ends at the timeout with a TimeoutError, and is retried', async () => {
      const server = await hostile('silent')
      const { send, retries } = transportTo(server.url.replace(/\/in$/, ''), { timeout: 300, retry: { limit: 1 } })
      const result = failure(await send())
      expect(result).toMatchObject({ code: 'ERR_RETRIES_EXHAUSTED', status: undefined, attempts: 2 })
      expect(result.error).toMatchObject({ name: 'TimeoutError' })
      expect(retries[0]?.error).toMatchObject({ name: 'TimeoutError' })
      expect(server.requests()).toBe(2)
    })

    it('headers that never end: a TimeoutError', async () => {
      const server = await raw((socket) => {
        socket.write('HTTP/1.1 200 OK\r\n')
        trickle(socket, 'x-slow: y\r\n', 50)
      })
      const result = failure(await transportTo(server.url, { timeout: 300, retry: { limit: 0 } }).send())
      expect(result).toMatchObject({ code: 'ERR_RETRIES_EXHAUSTED' })
      expect(result.error).toMatchObject({ name: 'TimeoutError' })
    })

    it('a 2xx whose body trickles: delivered, and the body given up at the timeout', async () => {
      const server = await hostile('slow-body')
      const { send } = transportTo(server.url.replace(/\/in$/, ''), { timeout: 300 })
      expect(await send()).toEqual({ ok: true, status: 200, attempts: 1 })
      await vi.waitFor(() => expect(server.closedByClient()).toBe(1))
    })

    it('a 2xx whose body never ends: delivered, and reading stops at the cap, closing the connection', async () => {
      const server = await raw((socket) => {
        socket.write(`${OK_HEAD}\r\n`)
        writeForever(socket, Buffer.alloc(64 * 1024, 'x'))
      })
      expect(await transportTo(server.url, { timeout: 5_000 }).send()).toEqual({ ok: true, status: 200, attempts: 1 })
      const [connection] = server.connections
      await connection?.closed
      // Reading on for the 5 s of the attempt would pull gigabytes on loopback; the cap plus the
      // socket buffers is a few MB.
      expect(connection?.written).toBeLessThan(RESPONSE_READ_BYTES + 32 * 1024 * 1024)
    })

    it(`a 2xx body of ${RESPONSE_READ_BYTES / 1024} KiB is read to its end: its connection stays open, and is used again`, async () => {
      const server = await sink(() => ({ status: 200, body: 'x'.repeat(RESPONSE_READ_BYTES) }))
      const { send } = transportTo(server.url)
      for (let batch = 0; batch < 4; batch++) expect(await send()).toMatchObject({ ok: true })
      // A connection cut after each body would make four; a new request may go out on a second
      // connection while the first is still being handed back to the pool.
      expect(server.connections().opened).toBeLessThanOrEqual(2)
      expect(server.connections().closed).toBe(0)
    })

    it('a 2xx body longer than the cap: delivered, and its connection closed rather than read to the end', async () => {
      const server = await sink(() => ({ status: 200, body: 'x'.repeat(4 * 1024 * 1024) }))
      expect(await transportTo(server.url).send()).toMatchObject({ ok: true })
      await vi.waitFor(() => expect(server.connections().closed).toBe(1))
    })

    it.each(['truncated', 'bad-chunked'] as const)('a 2xx with a %s body: delivered', async (behaviour) => {
      const server = await hostile(behaviour)
      expect(await transportTo(server.url.replace(/\/in$/, '')).send()).toMatchObject({ ok: true, status: 200 })
    })
  })

  describe("close()'s deadline (the signal)", () => {
    it('during an attempt the peer never answers: ERR_CLOSE_TIMEOUT at once, whatever the attempt timeout', async () => {
      const server = await hostile('silent')
      const { send } = transportTo(server.url.replace(/\/in$/, ''), { timeout: 600_000 })
      const deadline = new AbortController()
      const sending = send({ signal: deadline.signal })
      await server.received(1)
      deadline.abort(new Error('close() timed out'))
      // Nothing failed before the deadline: there is no earlier failure to name.
      expect(await sending).toEqual({
        ok: false,
        code: 'ERR_CLOSE_TIMEOUT',
        status: undefined,
        attempts: 1,
        error: undefined,
      })
    })

    it('during the 429 pause: ERR_CLOSE_TIMEOUT before any attempt', async () => {
      const server = await sink(() => ({ status: 429, headers: { 'retry-after': '3600' } }))
      const { send } = transportTo(server.url, { retry: { limit: 0, maxRetryAfter: 3_600_000 } })
      expect(failure(await send())).toMatchObject({ code: 'ERR_RETRIES_EXHAUSTED', status: 429 })
      const deadline = new AbortController()
      const sending = send({ signal: deadline.signal })
      deadline.abort(new Error('close() timed out'))
      expect(await sending).toMatchObject({ ok: false, code: 'ERR_CLOSE_TIMEOUT', attempts: 0 })
      expect(server.requests).toHaveLength(1)
    })

    it('already passed: ERR_CLOSE_TIMEOUT, nothing sent', async () => {
      const server = await sink()
      const deadline = new AbortController()
      deadline.abort(new Error('close() timed out'))
      expect(await transportTo(server.url).send({ signal: deadline.signal })).toMatchObject({
        code: 'ERR_CLOSE_TIMEOUT',
        attempts: 0,
      })
      expect(server.requests).toEqual([])
    })
  })
})
