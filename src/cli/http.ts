import type { IncomingMessage, Server } from 'node:http'

/** A request body larger than the reader's limit. */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the body is larger than ${limit} bytes`)
  }
}

/** Reads a whole request body, as the bytes received, refusing more than `limit` of them. */
export async function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  if (Number(request.headers['content-length'] ?? 0) > limit) throw new BodyTooLargeError(limit)
  const chunks: Buffer[] = []
  let bytes = 0
  for await (const chunk of request as AsyncIterable<Buffer>) {
    bytes += chunk.length
    if (bytes > limit) throw new BodyTooLargeError(limit)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks, bytes)
}

/** Starts listening and resolves with the base URL, port 0 meaning any free port. */
export function listenOn(server: Server, port: number, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      const address = server.address()
      const bound = typeof address === 'object' && address !== null ? address.port : port
      resolve(`http://${host.includes(':') ? `[${host}]` : host}:${bound}`)
    })
  })
}

/**
 * Stops accepting connections, ends the idle ones, and gives requests in flight `graceMs` before
 * cutting them (a sender sees a network error and retries); resolves once the server is closed.
 */
export function closeServer(server: Server, graceMs = 1_000): Promise<void> {
  return new Promise((resolve) => {
    const cut = setTimeout(() => server.closeAllConnections(), graceMs)
    server.close(() => {
      clearTimeout(cut)
      resolve()
    })
    server.closeIdleConnections()
  })
}
