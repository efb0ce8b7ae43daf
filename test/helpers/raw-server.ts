import { createServer, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'

/**
 * What the raw server does once it has read a whole request: it owns the socket and writes
 * whatever bytes it likes (a status line or not, framing right or wrong).
 */
export type RawBehaviour = (socket: Socket, connection: RawConnection) => void

/** One connection of a {@link RawServer}, counted as it goes. */
export interface RawConnection {
  /** Bytes the socket accepted for sending (written without backpressure, or drained). */
  written: number
  /** Resolves when the socket is closed, by either side. */
  readonly closed: Promise<void>
}

/**
 * A TCP server on 127.0.0.1 that speaks HTTP/1.1 only as far as a test script says: it reads each
 * request (headers and a Content-Length body), then hands the socket to the behaviour.
 */
export interface RawServer {
  readonly url: string
  readonly connections: RawConnection[]
  /** Requests read in full. */
  requests: number
  close(): Promise<void>
}

export async function startRawServer(behaviour: RawBehaviour): Promise<RawServer> {
  const sockets = new Set<Socket>()
  const connections: RawConnection[] = []
  const state = { requests: 0 }
  const server = createServer((socket) => {
    sockets.add(socket)
    let resolveClosed = () => {}
    const connection: RawConnection = { written: 0, closed: new Promise((resolve) => (resolveClosed = resolve)) }
    connections.push(connection)
    socket.on('error', () => {})
    socket.on('close', () => {
      sockets.delete(socket)
      resolveClosed()
    })
    let buffered = Buffer.alloc(0)
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk])
      const end = buffered.indexOf('\r\n\r\n')
      if (end === -1) return
      const length = Number(/content-length:\s*(\d+)/i.exec(buffered.subarray(0, end).toString('latin1'))?.[1] ?? 0)
      if (buffered.length < end + 4 + length) return
      socket.off('data', onData)
      state.requests++
      // Count what the socket accepts: the behaviour writes through this.
      const write = socket.write.bind(socket)
      socket.write = ((data: string | Uint8Array, ...rest: never[]) => {
        const accepted = write(data, ...rest)
        connection.written += typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength
        return accepted
      }) as typeof socket.write
      behaviour(socket, connection)
    }
    socket.on('data', onData)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    connections,
    get requests() {
      return state.requests
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}

/**
 * Writes `chunk` for as long as the peer reads, respecting backpressure, until the socket closes:
 * an endless body as fast as the reader takes it.
 */
export function writeForever(socket: Socket, chunk: Buffer): void {
  const pump = () => {
    while (!socket.destroyed && socket.write(chunk)) {
      // keep writing while the socket takes it
    }
  }
  socket.on('drain', pump)
  pump()
}

/** Writes `chunk` every `ms` until the socket closes: a body that trickles. */
export function trickle(socket: Socket, chunk: string, ms: number): void {
  const timer = setInterval(() => {
    if (socket.destroyed) clearInterval(timer)
    else socket.write(chunk)
  }, ms)
  socket.on('close', () => clearInterval(timer))
}
