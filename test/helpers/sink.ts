import { afterEach } from 'vitest'
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createTlsServer } from 'node:https'
import type { AddressInfo } from 'node:net'

/** One request as the sink received it. */
export interface ReceivedRequest {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly bytes: number
  /** The body exactly as received. */
  readonly raw: Buffer
  /** `Date.now()` when the request arrived. */
  readonly at: number
}

/** What the sink answers to the n-th request (0-based). */
export type Responder = (
  request: ReceivedRequest,
  index: number,
) => { status: number; headers?: Record<string, string>; delayMs?: number; body?: string }

/** A real HTTP (or HTTPS) server on 127.0.0.1 that records every request. */
export interface Sink {
  readonly url: string
  readonly requests: ReceivedRequest[]
  /** Connections clients opened, and how many of them have closed since. */
  connections(): { opened: number; closed: number }
  /** Every message of every 2xx-answered batch body. */
  delivered(): Array<Record<string, unknown>>
  close(): Promise<void>
}

export async function startSink(
  respond: Responder = () => ({ status: 200 }),
  options: { tls?: { key: string; cert: string } } = {},
): Promise<Sink> {
  const requests: ReceivedRequest[] = []
  const accepted: string[] = []
  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const raw = Buffer.concat(chunks)
      const received: ReceivedRequest = {
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body: raw.toString('utf8'),
        bytes: raw.length,
        raw,
        at: Date.now(),
      }
      const index = requests.push(received) - 1
      const answer = respond(received, index)
      const reply = () => {
        if (answer.status >= 200 && answer.status < 300) accepted.push(received.body)
        response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers })
        response.end(answer.body ?? '{}')
      }
      if (answer.delayMs) setTimeout(reply, answer.delayMs)
      else reply()
    })
  }
  const server = options.tls ? createTlsServer(options.tls, handle) : createServer(handle)
  const connections = { opened: 0, closed: 0 }
  server.on('connection', (socket) => {
    connections.opened++
    socket.on('close', () => connections.closed++)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    requests,
    connections: () => ({ ...connections }),
    delivered: () => accepted.flatMap((body) => (JSON.parse(body) as { batch: Array<Record<string, unknown>> }).batch),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** For a test file: starts sinks on demand (`await sink()`) and closes them after each test. */
export function useSinks(): (respond?: Responder) => Promise<Sink> {
  const sinks: Sink[] = []
  afterEach(async () => {
    await Promise.all(sinks.splice(0).map((sink) => sink.close()))
  })
  return async (respond) => {
    const started = await startSink(respond)
    sinks.push(started)
    return started
  }
}
