import { spawn } from 'node:child_process'
import { createServer as createHttp2Server } from 'node:http2'
import { createServer, type Server, type Socket } from 'node:net'
import { createServer as createTlsServer } from 'node:tls'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { WebhookDestination, type WebhookRequest } from '../../src/webhook/index.js'
import { DEFAULT_IDLE_MS } from '../../src/http1/connection.js'
import { createHttp1Transport } from '../../src/webhook/network/http1-transport.js'
import { certificates } from '../helpers/certs.js'
import { startSink, type Sink } from '../helpers/sink.js'
import { requestTo as baseRequest } from '../helpers/webhook-request.js'

/**
 * A raw receiver on 127.0.0.1: `answer` gets each request's head and body as they arrived on a
 * connection (its 0-based number, and the request's number on it) and writes what it likes.
 */
interface RawReceiver {
  readonly url: string
  readonly connections: () => number
  readonly requests: Array<{ connection: number; head: string; body: string }>
  /** Connections the client ended or reset. */
  readonly closedByClient: () => number
  close(): Promise<void>
}

type Answer = (socket: Socket, connection: number, nth: number) => void

async function startRaw(answer: Answer): Promise<RawReceiver> {
  const requests: RawReceiver['requests'] = []
  let connections = 0
  let closedByClient = 0
  const sockets = new Set<Socket>()
  const server: Server = createServer((socket) => {
    const connection = connections++
    sockets.add(socket)
    let nth = 0
    let pending = Buffer.alloc(0)
    // The client ended (FIN) or reset the connection; a connection the receiver destroys itself sees neither.
    let closed = false
    const byClient = () => {
      if (!closed) closedByClient++
      closed = true
    }
    socket.on('end', byClient)
    socket.on('error', byClient)
    socket.on('close', () => sockets.delete(socket))
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk])
      for (;;) {
        const end = pending.indexOf('\r\n\r\n')
        if (end < 0) return
        const head = pending.toString('latin1', 0, end)
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0)
        if (pending.length < end + 4 + length) return
        const body = pending.toString('utf8', end + 4, end + 4 + length)
        pending = pending.subarray(end + 4 + length)
        requests.push({ connection, head, body })
        answer(socket, connection, nth++)
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}/in`,
    connections: () => connections,
    requests,
    closedByClient: () => closedByClient,
    async close() {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

const ok = (socket: Socket, extra = '') => socket.write(`HTTP/1.1 200 OK\r\ncontent-length: 2\r\n${extra}\r\nok`)

/** A request with a body whose UTF-8 length is not its length in characters. */
const requestTo = (url: string, extra: Partial<WebhookRequest> = {}): WebhookRequest =>
  baseRequest(url, { body: '{"a":"é"}', timeoutMs: 5_000, ...extra })

let receiver: RawReceiver | undefined
let sink: Sink | undefined
afterEach(async () => {
  await receiver?.close()
  await sink?.close()
  receiver = undefined
  sink = undefined
})

describe('eventwire HTTP/1.1 transport: connections', () => {
  it('sends one request per write with its exact UTF-8 length, and keeps one connection alive for a run of them', async () => {
    receiver = await startRaw((socket) => ok(socket))
    const transport = createHttp1Transport()
    for (let index = 0; index < 20; index++) {
      expect(await transport.send(requestTo(receiver.url))).toEqual({ ok: true, status: 200, retryAfter: null })
    }
    await transport.close?.()
    expect(receiver.connections()).toBe(1)
    expect(receiver.requests).toHaveLength(20)
    const [first] = receiver.requests
    expect(first?.head).toMatch(/^POST \/in HTTP\/1\.1\r\nhost: 127\.0\.0\.1:\d+\r\ncontent-length: 10\r\n/)
    expect(first?.body).toBe('{"a":"é"}')
  })

  it('opens at most `connections` to a URL; the rest wait in line for one', async () => {
    const held: Socket[] = []
    receiver = await startRaw((socket) => held.push(socket))
    const transport = createHttp1Transport({ connections: 3 })
    const sent = Array.from({ length: 10 }, () => transport.send(requestTo(receiver!.url)))
    await vi.waitFor(() => expect(receiver?.requests).toHaveLength(3))
    expect(receiver.connections()).toBe(3)
    // Each answer frees a connection for the next in line.
    for (let answered = 0; answered < 10; answered++) {
      await vi.waitFor(() => expect(held.length).toBeGreaterThan(answered))
      ok(held[answered] as Socket)
    }
    // Every request answered 200, none failed while it waited in line.
    expect(await Promise.all(sent)).toEqual(
      Array.from({ length: 10 }, () => ({ ok: true, status: 200, retryAfter: null })),
    )
    expect(receiver.connections()).toBe(3)
    await transport.close?.()
  })

  it('shares idle connections among the URLs of one origin: a run to five paths uses one connection', async () => {
    receiver = await startRaw((socket) => ok(socket))
    const transport = createHttp1Transport()
    for (let index = 0; index < 10; index++) {
      expect(await transport.send(requestTo(`${receiver.url}/${index % 5}`))).toMatchObject({ ok: true, status: 200 })
    }
    expect(receiver.connections()).toBe(1)
    expect(receiver.requests.map((request) => request.head.split(' ')[1])).toEqual(
      Array.from({ length: 10 }, (_, index) => `/in/${index % 5}`),
    )
    await transport.close?.()
  })

  it('counts connections in use per URL: a URL that never answers holds its own, and another URL of the origin goes on', async () => {
    const held: Socket[] = []
    receiver = await startRaw((socket) => {
      const request = receiver?.requests.at(-1)
      if (request?.head.startsWith('POST /in/silent ')) held.push(socket)
      else ok(socket)
    })
    const transport = createHttp1Transport({ connections: 2 })
    const silent = Array.from({ length: 3 }, () => transport.send(requestTo(`${receiver!.url}/silent`)))
    await vi.waitFor(() => expect(held).toHaveLength(2))
    // The silent URL is at its two; its third request waits in its own line, not in the other URL's.
    for (let index = 0; index < 3; index++) {
      expect(await transport.send(requestTo(`${receiver.url}/fine`))).toMatchObject({ ok: true, status: 200 })
    }
    expect(receiver.connections()).toBe(3)
    expect(receiver.requests.filter((request) => request.head.startsWith('POST /in/silent '))).toHaveLength(2)
    // The fine URL's idle connection is not the silent URL's to take while that URL is at its two.
    ok(held[0] as Socket)
    await vi.waitFor(() => expect(held).toHaveLength(3))
    ok(held[1] as Socket)
    ok(held[2] as Socket)
    expect(await Promise.all(silent)).toEqual(
      Array.from({ length: 3 }, () => ({ ok: true, status: 200, retryAfter: null })),
    )
    // The third silent request went on the connection its first one freed.
    expect(
      receiver.requests.filter((request) => request.head.startsWith('POST /in/silent ')).map((r) => r.connection),
    ).toEqual([0, 1, 0])
    await transport.close?.()
  })

  it.each([40, 4_000])(
    'never reports delivered an event the receiver refused, when it writes a stray 200 after each refusal (%i events)',
    async (events) => {
      // Each odd event is refused with a 400, and 5 ms later the receiver writes a 200 that no
      // request asked for, on the same connection: a broken proxy, a handler that answers twice.
      receiver = await startRaw((socket) => {
        const n = Number(/"n":(\d+)/.exec(receiver?.requests.at(-1)?.body ?? '')?.[1])
        if (n % 2 === 0) return ok(socket)
        socket.write('HTTP/1.1 400 Bad Request\r\ncontent-length: 3\r\n\r\nbad')
        setTimeout(() => socket.writable && socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'), 5)
      })
      const transport = createHttp1Transport({ connections: 8 })
      const outcomes: Array<boolean | string> = Array.from({ length: events })
      let next = 0
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < events) {
            const n = next++
            try {
              const result = await transport.send(requestTo(receiver!.url, { body: JSON.stringify({ n }) }))
              // Delivered: an answer, and a 2xx one.
              outcomes[n] = result.ok && result.status >= 200 && result.status < 300
            } catch (error) {
              outcomes[n] = String(error)
            }
          }
        }),
      )
      await transport.close?.()
      const refusedYetDelivered = outcomes.flatMap((outcome, n) => (n % 2 === 1 && outcome === true ? [n] : []))
      expect(refusedYetDelivered).toEqual([])
      // And the other way: every event the receiver took is reported delivered.
      expect(outcomes.filter((outcome, n) => n % 2 === 0 && outcome !== true)).toEqual([])
      expect(receiver.requests).toHaveLength(events)
    },
    60_000,
  )

  it('fails an attempt to a receiver that speaks HTTP/2 only at once, saying so', async () => {
    const server = createHttp2Server()
    server.on('stream', (stream) => stream.respond({ ':status': 200 }, { endStream: true }))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as { port: number }
    const transport = createHttp1Transport()
    try {
      const result = await transport.send(requestTo(`http://127.0.0.1:${port}/in`, { timeoutMs: 60_000 }))
      expect(result).toMatchObject({ ok: false, failure: 'network' })
      expect(String((result as { cause?: Error }).cause?.message)).toContain('it answered in HTTP/2')
    } finally {
      await transport.close?.()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('sends once more, on a new connection, a request whose kept-alive connection the receiver closed before answering', async () => {
    // Each connection answers its first request and drops the next unanswered: a receiver that
    // closed an idle connection just as the request went out on it.
    receiver = await startRaw((socket, _connection, nth) => (nth === 0 ? ok(socket) : socket.destroy()))
    const transport = createHttp1Transport()
    expect(await transport.send(requestTo(receiver.url))).toMatchObject({ ok: true, status: 200 })
    expect(await transport.send(requestTo(receiver.url))).toMatchObject({ ok: true, status: 200 })
    expect(receiver.connections()).toBe(2)
    expect(receiver.requests.map((request) => request.connection)).toEqual([0, 0, 1])
    await transport.close?.()
  })

  it('sends a request again on a new connection, not on another idle one the receiver may have closed the same way', async () => {
    // Two connections each answer one request, then drop whatever comes next unanswered.
    const first: Socket[] = []
    receiver = await startRaw((socket, connection, nth) => {
      if (nth > 0) socket.destroy()
      else if (connection < 2) {
        first.push(socket)
        if (first.length === 2) for (const held of first) ok(held)
      } else ok(socket)
    })
    const transport = createHttp1Transport()
    // Two at once: two connections, both idle after.
    await Promise.all([transport.send(requestTo(receiver.url)), transport.send(requestTo(receiver.url))])
    expect(await transport.send(requestTo(receiver.url))).toMatchObject({ ok: true, status: 200 })
    expect(receiver.requests.map((request) => request.connection).slice(2)).toEqual([1, 2])
    await transport.close?.()
  })

  it('fails, without sending it again, a request whose kept-alive connection was lost after the transport began to close', async () => {
    let drop: (() => void) | undefined
    receiver = await startRaw((socket, _connection, nth) => {
      if (nth === 0) ok(socket)
      else drop = () => socket.destroy()
    })
    const transport = createHttp1Transport()
    await transport.send(requestTo(receiver.url))
    const second = transport.send(requestTo(receiver.url))
    await vi.waitFor(() => expect(drop).toBeDefined())
    const closing = transport.close?.()
    drop?.()
    expect(await second).toMatchObject({ ok: false, failure: 'network' })
    await closing
    expect(receiver.connections()).toBe(1)
  })

  it('stops reading the body of an answered request on close(), so that closing does not wait for the body', async () => {
    receiver = await startRaw((socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\nok'))
    const transport = createHttp1Transport()
    // A deadline far past the test's: only close() can end the body's reading in time.
    expect(await transport.send(requestTo(receiver.url, { timeoutMs: 600_000 }))).toMatchObject({ ok: true })
    await transport.close?.()
    await vi.waitFor(() => expect(receiver?.closedByClient()).toBe(1))
  })

  it('never sends a request that gave up while it waited in line for a connection', async () => {
    const held: Socket[] = []
    receiver = await startRaw((socket) => held.push(socket))
    const transport = createHttp1Transport({ connections: 1 })
    const first = transport.send(requestTo(receiver.url))
    await vi.waitFor(() => expect(held).toHaveLength(1))
    const unwanted = new AbortController()
    const second = transport.send(requestTo(receiver.url, { signal: unwanted.signal }))
    const third = transport.send(requestTo(receiver.url))
    unwanted.abort()
    expect(await second).toMatchObject({ ok: false, failure: 'network' })
    ok(held[0] as Socket)
    expect(await first).toMatchObject({ ok: true })
    await vi.waitFor(() => expect(held).toHaveLength(2))
    ok(held[1] as Socket)
    expect(await third).toMatchObject({ ok: true })
    // The first and third requests only, both on the one connection.
    expect(receiver.requests.map((request) => request.connection)).toEqual([0, 0])
    await transport.close?.()
  })

  it('ends unsent, on close(), a request still waiting in line for a connection: nothing is sent after close()', async () => {
    const held: Socket[] = []
    receiver = await startRaw((socket) => held.push(socket))
    const transport = createHttp1Transport({ connections: 1 })
    const first = transport.send(requestTo(receiver.url, { timeoutMs: 200 }))
    await vi.waitFor(() => expect(held).toHaveLength(1))
    const waiting = transport.send(requestTo(receiver.url))
    const closed = transport.close?.()
    expect(await waiting).toMatchObject({ ok: false, failure: 'network' })
    // The first ends at its deadline, freeing its connection: nobody is left to take one.
    expect(await first).toMatchObject({ ok: false, failure: 'timeout' })
    await closed
    expect(held).toHaveLength(1)
    expect(receiver.requests).toHaveLength(1)
  })

  it('a destination closed at its deadline sends nothing more, not even what its transport held in line', async () => {
    const held: Socket[] = []
    receiver = await startRaw((socket) => held.push(socket))
    const destination = new WebhookDestination({
      webhooks: [{ url: receiver.url }],
      transport: createHttp1Transport({ connections: 1 }),
      timeoutMs: 300,
      retryWindowMs: 0,
    })
    const first = destination.deliver({ type: 'track', userId: 'u1', event: 'A' })
    await vi.waitFor(() => expect(held).toHaveLength(1))
    const second = destination.deliver({ type: 'track', userId: 'u1', event: 'B' })
    await destination.close({ timeout: 50 })
    const settled = await Promise.all([first, second])
    expect(settled.map((result) => result.status)).toEqual(['failed', 'failed'])
    // The first's attempt ended at its deadline after close(); the second was never sent.
    expect(held).toHaveLength(1)
    expect(receiver.requests).toHaveLength(1)
  })

  it('refuses a literal private address without connecting when told to block private networks, and a name that resolves to one', async () => {
    receiver = await startRaw((socket) => ok(socket))
    const transport = createHttp1Transport({ blockPrivateNetworks: true })
    const port = new URL(receiver.url).port
    expect(await transport.send(requestTo(receiver.url))).toMatchObject({ ok: false, failure: 'blocked' })
    expect(await transport.send(requestTo(`http://localhost:${port}/in`))).toMatchObject({
      ok: false,
      failure: 'blocked',
      cause: expect.objectContaining({ message: expect.stringMatching(/^localhost resolves to 127\.0\.0\.1/) }),
    })
    expect(receiver.connections()).toBe(0)
    await transport.close?.()
  })

  it('closes each idle connection at its own time: a second one left idle later is closed later', async () => {
    const sockets: Socket[] = []
    receiver = await startRaw((socket) => sockets.push(socket))
    const transport = createHttp1Transport()
    const first = transport.send(requestTo(`${receiver.url}/a`))
    const second = transport.send(requestTo(`${receiver.url}/b`))
    await vi.waitFor(() => expect(sockets).toHaveLength(2))
    ok(sockets[0] as Socket, 'keep-alive: timeout=2\r\n')
    await first
    await new Promise((resolve) => setTimeout(resolve, 300))
    ok(sockets[1] as Socket, 'keep-alive: timeout=2\r\n')
    await second
    await vi.waitFor(() => expect(receiver?.closedByClient()).toBe(1), { timeout: 5_000 })
    await vi.waitFor(() => expect(receiver?.closedByClient()).toBe(2), { timeout: 5_000 })
    await transport.close?.()
  })

  it('does not send again a request whose kept-alive connection closed after a byte of an answer (a 1xx)', async () => {
    receiver = await startRaw((socket, _connection, nth) => {
      if (nth === 0) ok(socket)
      else socket.end('HTTP/1.1 100 Continue\r\n\r\n')
    })
    const transport = createHttp1Transport()
    await transport.send(requestTo(receiver.url))
    expect(await transport.send(requestTo(receiver.url))).toMatchObject({ ok: false, failure: 'network' })
    expect(receiver.requests).toHaveLength(2)
    await transport.close?.()
  })

  it('does not send again a request whose new connection closed before answering: a network failure', async () => {
    receiver = await startRaw((socket) => socket.destroy())
    const transport = createHttp1Transport()
    const response = await transport.send(requestTo(receiver.url))
    expect(response).toMatchObject({ ok: false, failure: 'network' })
    expect(receiver.requests).toHaveLength(1)
    await transport.close?.()
  })

  // Within a second: a new connection for the next request. In 3 s: the same one, kept for 2 s.
  it.each([
    [1, 2],
    [3, 1],
  ])(
    'opens as many connections for two requests as a receiver whose connections idle out in %i s needs: %i',
    async (timeout, connections) => {
      receiver = await startRaw((socket) => ok(socket, `keep-alive: timeout=${timeout}\r\n`))
      const transport = createHttp1Transport()
      await transport.send(requestTo(receiver.url))
      await transport.send(requestTo(receiver.url))
      expect(receiver.connections()).toBe(connections)
      await transport.close?.()
    },
  )

  it('closes after any answer but a 2xx: the next request goes on a new connection', async () => {
    const statuses = ['200 OK', '299 Odd', '300 Multiple Choices', '404 Not Found', '503 Unavailable', '200 OK']
    receiver = await startRaw((socket) => {
      const status = statuses[(receiver?.requests.length ?? 1) - 1] as string
      socket.write(`HTTP/1.1 ${status}\r\ncontent-length: 0\r\n\r\n`)
    })
    const transport = createHttp1Transport({ connections: 1 })
    for (const status of statuses)
      expect(await transport.send(requestTo(receiver.url))).toMatchObject({ status: Number.parseInt(status, 10) })
    // 200 and 299 keep the first connection; 300, 404 and 503 each close theirs.
    expect(receiver.requests.map((request) => request.connection)).toEqual([0, 0, 0, 1, 2, 3])
    await transport.close?.()
  })

  it('stops reading a body longer than the cap at once: the connection closes and the next request goes on', async () => {
    receiver = await startRaw((socket, _connection, nth) =>
      nth === 0 ? socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100000000\r\n\r\nok') : ok(socket),
    )
    // One connection, and a deadline far past the test's: only closing at the cap lets the second request through.
    const transport = createHttp1Transport({ connections: 1 })
    const long = { timeoutMs: 600_000 }
    expect(await transport.send(requestTo(receiver.url, long))).toMatchObject({ ok: true, status: 200 })
    expect(await transport.send(requestTo(receiver.url, long))).toMatchObject({ ok: true, status: 200 })
    expect(receiver.connections()).toBe(2)
    await vi.waitFor(() => expect(receiver?.closedByClient()).toBe(1))
    await transport.close?.()
  }, 10_000)

  it('reads a body that runs to the connection’s end, and fails an attempt whose receiver closes before answering, saying so', async () => {
    receiver = await startRaw((socket, connection) =>
      connection === 0 ? socket.end('HTTP/1.1 200 OK\r\n\r\nall of it') : socket.end(),
    )
    const transport = createHttp1Transport()
    expect(await transport.send(requestTo(receiver.url))).toMatchObject({ ok: true, status: 200 })
    const cut = await transport.send(requestTo(receiver.url))
    expect(cut).toMatchObject({ ok: false, failure: 'network' })
    expect(String((cut as { cause?: Error }).cause?.message)).toContain(
      'the receiver closed the connection before its response ended',
    )
    await transport.close?.()
  })

  it('closes a connection left idle past the receiver’s keep-alive timeout less a second', async () => {
    receiver = await startRaw((socket) => ok(socket, 'keep-alive: timeout=2\r\n'))
    const transport = createHttp1Transport()
    await transport.send(requestTo(receiver.url))
    await vi.waitFor(() => expect(receiver?.closedByClient()).toBe(1), { timeout: 5_000 })
    await transport.close?.()
  })

  it('does not keep the process alive with idle connections', async () => {
    sink = await startSink()
    const script = `
      import { createHttp1Transport } from ${JSON.stringify(new URL('../../src/webhook/network/http1-transport.ts', import.meta.url).pathname)}
      const url = ${JSON.stringify(`${sink.url}/in`)}
      const parsed = new URL(url)
      const response = await createHttp1Transport().send({ url, origin: parsed.origin, path: parsed.pathname, headers: {}, body: '{}', timeoutMs: 5000 })
      const answered = performance.now()
      process.on('exit', () => console.log(response.status, Math.round(performance.now() - answered)))
    `
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let output = ''
    child.stdout.on('data', (chunk) => {
      output += chunk
    })
    const code = await new Promise((resolve) => child.on('exit', resolve))
    const [status, idleForMs] = output.trim().split(' ').map(Number)
    expect(status).toBe(200)
    expect(code).toBe(0)
    // It exited with its connection idle: before the transport's own idle timeout could close it.
    expect(idleForMs).toBeLessThan(DEFAULT_IDLE_MS)
    expect(sink.requests).toHaveLength(1)
  })

  it('refuses a request whose header value holds a line break, sending nothing, and goes on', async () => {
    receiver = await startRaw((socket) => ok(socket))
    const transport = createHttp1Transport()
    const split = await transport.send(requestTo(receiver.url, { headers: { 'x-a': 'b\r\nx-injected: 1' } }))
    expect(split).toMatchObject({ ok: false, failure: 'network' })
    expect(String((split as { cause?: Error }).cause?.message)).toMatch(/x-a header's value holds a line break/)
    expect(await transport.send(requestTo(receiver.url))).toMatchObject({ ok: true, status: 200 })
    expect(receiver.requests).toHaveLength(1)
    expect(receiver.requests[0]?.head).not.toContain('x-injected')
    await transport.close?.()
  })

  it('writes obs-text header values as Latin-1 bytes and the body as UTF-8', async () => {
    receiver = await startRaw((socket) => ok(socket))
    const transport = createHttp1Transport()
    await transport.send(requestTo(receiver.url, { headers: { 'x-name': 'café' } }))
    expect(receiver.requests[0]?.head).toContain('x-name: café')
    expect(receiver.requests[0]?.body).toBe('{"a":"é"}')
    await transport.close?.()
  })

  it('ends an attempt no longer wanted: its connection closes and the answer is a network failure', async () => {
    receiver = await startRaw(() => {})
    const transport = createHttp1Transport()
    const unwanted = new AbortController()
    const sent = transport.send(requestTo(receiver.url, { signal: unwanted.signal }))
    await vi.waitFor(() => expect(receiver?.requests).toHaveLength(1))
    unwanted.abort()
    expect(await sent).toMatchObject({ ok: false, failure: 'network' })
    await vi.waitFor(() => expect(receiver?.closedByClient()).toBe(1))
    await transport.close?.()
  })

  it('closes idle connections on close(), lets a request in flight finish, and refuses requests after', async () => {
    let answerLater: Socket | undefined
    receiver = await startRaw((socket, connection) => {
      if (connection === 0) ok(socket)
      else answerLater = socket
    })
    const transport = createHttp1Transport()
    await transport.send(requestTo(receiver.url))
    const other = createHttp1Transport()
    const inFlight = other.send(requestTo(receiver.url))
    await vi.waitFor(() => expect(answerLater).toBeDefined())
    await transport.close?.()
    await vi.waitFor(() => expect(receiver?.closedByClient()).toBe(1))
    const closing = other.close?.()
    let closed = false
    void closing?.then(() => {
      closed = true
    })
    await new Promise((resolve) => setTimeout(resolve, 20))
    // Not closed while its request is in flight.
    expect(closed).toBe(false)
    ok(answerLater as Socket)
    expect(await inFlight).toMatchObject({ ok: true, status: 200 })
    await closing
    // Its connection, done with once closing, was closed rather than kept.
    await vi.waitFor(() => expect(receiver?.closedByClient()).toBe(2))
    expect(await other.send(requestTo(receiver.url))).toMatchObject({ ok: false, failure: 'network' })
  })

  it('connects to a literal IPv6 address', async (context) => {
    const server = createServer((socket) =>
      socket.once('data', () => socket.end('HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n')),
    )
    const listening = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false))
      server.listen(0, '::1', () => resolve(true))
    })
    if (!listening) return context.skip()
    const { port } = server.address() as { port: number }
    const transport = createHttp1Transport()
    expect(await transport.send(requestTo(`http://[::1]:${port}/in`))).toMatchObject({ ok: true, status: 204 })
    await transport.close?.()
    await new Promise((resolve) => server.close(resolve))
  })
})

describe('eventwire HTTP/1.1 transport: TLS', () => {
  it.each(['TLSv1.2', 'TLSv1.3'] as const)(
    'resumes the TLS session of an origin on its next connection, however long after, and never another origin’s (%s)',
    async (maxVersion) => {
      // Each connection carries one request (Connection: close): every request needs a handshake.
      const reused: Array<[string, boolean]> = []
      const server = createTlsServer({ ...certificates.selfSigned, maxVersion }, (socket) => {
        socket.once('data', (head: Buffer) => {
          const host = /\r\nhost: ([^:]+)/.exec(head.toString('latin1'))?.[1] ?? ''
          reused.push([host, socket.isSessionReused()])
          socket.end('HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 0\r\n\r\n')
        })
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      const { port } = server.address() as { port: number }
      const transport = createHttp1Transport({ tls: { ca: certificates.selfSigned.cert } })
      try {
        for (const host of ['127.0.0.1', '127.0.0.1', '127.0.0.1', 'localhost', 'localhost'])
          expect(await transport.send(requestTo(`https://${host}:${port}/in`))).toMatchObject({ ok: true, status: 200 })
        // Each origin's first handshake is full; 127.0.0.1's session is not localhost's.
        expect(reused).toEqual([
          ['127.0.0.1', false],
          ['127.0.0.1', true],
          ['127.0.0.1', true],
          ['localhost', false],
          ['localhost', true],
        ])
      } finally {
        await transport.close?.()
        await new Promise((resolve) => server.close(resolve))
      }
    },
  )

  it('sends its client certificate to a receiver that asks for one, and is refused without it', async () => {
    const server = createTlsServer(
      { ...certificates.selfSigned, ca: certificates.selfSigned.cert, requestCert: true, rejectUnauthorized: true },
      (socket) => {
        socket.on('error', () => undefined)
        socket.once('data', () => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n'))
      },
    )
    server.on('tlsClientError', () => undefined)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as { port: number }
    const url = `https://127.0.0.1:${port}/in`
    const ca = certificates.selfSigned.cert
    const withCertificate = createHttp1Transport({ tls: { ca, ...certificates.selfSigned } })
    const without = createHttp1Transport({ tls: { ca } })
    try {
      expect(await withCertificate.send(requestTo(url))).toMatchObject({ ok: true, status: 200 })
      expect(await without.send(requestTo(url))).toMatchObject({ ok: false })
    } finally {
      await Promise.all([withCertificate.close?.(), without.close?.()])
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('refuses an option it does not know, and a count of connections it cannot use, naming them', () => {
    expect(() => createHttp1Transport({ conections: 8 } as never)).toThrow(
      /^Invalid option `conections`: no such option/,
    )
    expect(() => createHttp1Transport({ tls: { servername: 'x' } } as never)).toThrow(
      /^Invalid option `tls\.servername`: no such option/,
    )
    expect(() => createHttp1Transport({ connections: 0 })).toThrow(
      'Invalid option `connections`: expected a whole number from 1 to 100000, got 0.',
    )
  })

  it('delivers to a receiver whose certificate it trusts, checking the name, and refuses a wrong name', async () => {
    sink = await startSink(() => ({ status: 200 }), { tls: certificates.selfSigned })
    const trusting = createHttp1Transport({ tls: { ca: certificates.selfSigned.cert } })
    const destination = new WebhookDestination({ webhooks: [{ url: `${sink.url}/in` }], transport: trusting })
    expect((await destination.deliver({ type: 'track', userId: 'u1', event: 'E' })).status).toBe('delivered')
    await destination.close()
    const wrong = await startSink(() => ({ status: 200 }), { tls: certificates.wrongHost })
    try {
      const transport = createHttp1Transport({ tls: { ca: certificates.ca } })
      // Twice: the refused handshake left no session that a second connection could resume.
      for (let attempt = 0; attempt < 2; attempt++)
        expect(await transport.send(requestTo(`${wrong.url}/in`))).toMatchObject({ ok: false, failure: 'tls' })
      expect(wrong.requests).toHaveLength(0)
      await transport.close?.()
    } finally {
      await wrong.close()
    }
  })
})
