import { createServer, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'

/**
 * How a hostile receiver answers, once it has read a whole request:
 * - `slow-body`: the status line and headers (`Content-Length: 10000`, under undici's dump limit),
 *   then one body byte every 50 ms: longer than any test;
 * - `endless-body`: a chunked body written as fast as the socket drains, forever;
 * - `silent`: nothing at all;
 * - `truncated`: `Content-Length: 100`, 10 bytes, then the connection closes;
 * - `bad-chunked`: a chunked body whose chunk size is not hex, then nothing.
 */
export type HostileBehaviour = 'slow-body' | 'endless-body' | 'silent' | 'truncated' | 'bad-chunked'

/** A raw TCP server on 127.0.0.1 that speaks just enough HTTP/1.1 to misbehave. */
export interface HostileReceiver {
  readonly url: string
  /** Requests read in full. */
  readonly requests: () => number
  /** Resolves when the n-th request (1-based) has been read in full. */
  readonly received: (count: number) => Promise<void>
  /** Connections the client closed (or reset) while this receiver still meant to send. */
  readonly closedByClient: () => number
  close(): Promise<void>
}

function answer(socket: Socket, behaviour: HostileBehaviour, status: number, stopped: () => boolean): void {
  const head = (framing: string) =>
    socket.write(`HTTP/1.1 ${status} X\r\ncontent-type: text/plain\r\n${framing}\r\n\r\n`)
  switch (behaviour) {
    case 'slow-body': {
      head('content-length: 10000')
      const drip = setInterval(() => (stopped() ? clearInterval(drip) : socket.write('x')), 50)
      socket.once('close', () => clearInterval(drip))
      return
    }
    case 'endless-body': {
      head('transfer-encoding: chunked')
      const chunk = `4000\r\n${'y'.repeat(0x4000)}\r\n`
      const pump = () => {
        while (!stopped() && socket.write(chunk));
      }
      socket.on('drain', pump)
      pump()
      return
    }
    case 'silent':
      return
    case 'truncated':
      head('content-length: 100')
      socket.end('0123456789')
      return
    case 'bad-chunked':
      head('transfer-encoding: chunked')
      socket.write('zz\r\nnot a chunk\r\n')
      return
  }
}

/** Starts a receiver that answers every request with `status` and then `behaviour`. */
export async function startHostileReceiver(behaviour: HostileBehaviour, status = 200): Promise<HostileReceiver> {
  let requests = 0
  let closedByClient = 0
  const waiters: Array<{ count: number; resolve: () => void }> = []
  const sockets = new Set<Socket>()
  let closing = false
  const server = createServer((socket) => {
    sockets.add(socket)
    let buffered = ''
    let answered = false
    socket.on('error', () => undefined)
    socket.on('close', () => {
      sockets.delete(socket)
      if (answered && !closing && behaviour !== 'truncated') closedByClient++
    })
    socket.on('data', (data: Buffer) => {
      if (answered) return
      buffered += data.toString('latin1')
      const end = buffered.indexOf('\r\n\r\n')
      if (end === -1) return
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0)
      if (buffered.length - end - 4 < length) return
      answered = true
      requests++
      for (const waiter of waiters.filter((candidate) => candidate.count <= requests)) waiter.resolve()
      answer(socket, behaviour, status, () => closing || socket.destroyed)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/in`,
    requests: () => requests,
    received: (count) =>
      requests >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve })),
    closedByClient: () => closedByClient,
    close: () =>
      new Promise((resolve) => {
        closing = true
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}
