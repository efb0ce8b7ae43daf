import type { IncomingMessage, Server } from 'node:http'

/** A request body larger than the reader's limit. */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the body is larger than ${limit} bytes`)
  }
}

/** How far past its limit a body is read and dropped before the answer, as a multiple of the limit. */
export const DRAIN_FACTOR = 2

/**
 * Reads a whole request body, as the bytes received, refusing more than `limit` of them. A body
 * over the limit is read to its end and dropped, up to {@link DRAIN_FACTOR} times the limit, so
 * that its sender gets the refusal.
 */
export async function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  const drainLimit = limit * DRAIN_FACTOR
  // Too large to be worth reading: cut at once, and the sender may see a reset instead of the answer.
  if (Number(request.headers['content-length'] ?? 0) > drainLimit) throw new BodyTooLargeError(limit)
  const chunks: Buffer[] = []
  let bytes = 0
  for await (const chunk of request as AsyncIterable<Buffer>) {
    bytes += chunk.length
    if (bytes > drainLimit) throw new BodyTooLargeError(limit)
    // Past the limit the rest is read and dropped: a sender still writing then reads the 413,
    // where a connection closed on unread data would have reset it mid-write.
    // Stryker disable next-line ConditionalExpression: keeping the dropped bytes changes only memory; the body is refused.
    if (bytes <= limit) chunks.push(chunk)
  }
  if (bytes > limit) throw new BodyTooLargeError(limit)
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
