import { isIP, connect as netConnect, type Socket } from 'node:net'
import { type ConnectionOptions, connect as tlsConnect } from 'node:tls'
import { PROXY_FAILURE_CODE } from '../core/transport-failure.js'
import type { ProxyAddress } from './proxy.js'
import { headEnd, MAX_HEAD_BYTES, printable } from './response-reader.js'

/**
 * An egress proxy's own failure: it could not be reached, or it did not open the tunnel. Nothing
 * reached the receiver; the attempt fails as the proxy's (`failure: 'proxy'`).
 */
export function proxyError(proxy: ProxyAddress, what: string, cause?: unknown): Error {
  return Object.assign(new Error(`the proxy ${proxy.name} ${what}`, cause === undefined ? {} : { cause }), {
    code: PROXY_FAILURE_CODE,
  })
}

/**
 * Up to 60 characters of what a proxy said, fit to quote: {@link printable}, and the proxy's own
 * credentials hidden, should it echo them back.
 */
function heard(proxy: ProxyAddress, said: string): string {
  const text = printable(said.slice(0, 60))
  const credentials = proxy.authorization?.slice('Basic '.length)
  return credentials === undefined ? text : text.replaceAll(credentials, '***')
}

/** What a refusal of CONNECT says about the fix, by the proxy's status. */
function hintFor(status: number): string {
  if (status === 407) return ': it wants credentials; give them in the proxy URL (http://user:password@host:port)'
  if (status === 403) return ': it does not allow this target'
  return ''
}

/**
 * Opens a tunnel to `authority` (`host:port`) through `proxy` with HTTP CONNECT, and hands over
 * the socket it runs on, ready for the target's bytes (TLS to the target is the caller's, over
 * it). Any failure before the proxy's 2xx is the proxy's: `done` gets a {@link proxyError}. Returns
 * what aborts it, until `done` is called; `done` is not called after an abort. `tls`: the options
 * of a TLS connection to an `https:` proxy (a private CA, a client certificate).
 */
export function openTunnel(
  proxy: ProxyAddress,
  authority: string,
  tls: ConnectionOptions | undefined,
  done: (error: Error | undefined, socket: Socket | undefined) => void,
): () => void {
  const socket: Socket = proxy.tls
    ? tlsConnect({
        ...tls,
        host: proxy.host,
        port: proxy.port,
        ...(isIP(proxy.host) === 0 ? { servername: proxy.host } : {}),
      })
    : netConnect({ host: proxy.host, port: proxy.port })
  // Stryker disable next-line BooleanLiteral: a request is one write, so Nagle's delay changes when bytes leave, never what is delivered.
  socket.setNoDelay(true)
  let settled = false
  let head = Buffer.alloc(0)
  const settle = (error: Error | undefined): void => {
    if (settled) return
    settled = true
    // The target's bytes are the connection's. The 'error' and 'end' listeners stay, doing
    // nothing now: TLS to the target may take the socket over, and an error it emits later must
    // still have a listener, or it would end the process.
    // Stryker disable next-line all: a listener left would only copy bytes nobody reads (memory, not behaviour).
    socket.off('data', read)
    if (error === undefined) {
      done(undefined, socket)
      return
    }
    socket.destroy()
    done(error, undefined)
  }
  const read = (chunk: Buffer): void => {
    head = Buffer.concat([head, chunk])
    // A NUL cannot begin a status line; it begins the frame an HTTP/2 server sends first.
    if (head[0] === 0) {
      settle(proxyError(proxy, 'answered CONNECT in HTTP/2; an egress proxy must speak HTTP/1.1'))
      return
    }
    const end = headEnd(head)
    // The same limit however the answer was split: a whole head in one read is held to it too.
    if ((end?.text ?? head.length) > MAX_HEAD_BYTES) {
      settle(proxyError(proxy, `answered CONNECT with a head over ${MAX_HEAD_BYTES} bytes`))
      return
    }
    if (end === undefined) return
    const text = head.toString('latin1', 0, end.text)
    const statusLine = text.split(/\r?\n/, 1)[0] as string
    const match = /^HTTP\/1\.[01] (\d\d\d)(?: (.*))?$/.exec(statusLine)
    if (match === null) {
      settle(proxyError(proxy, `answered CONNECT with ${JSON.stringify(heard(proxy, statusLine))}, not HTTP/1.1`))
      return
    }
    const status = Number(match[1])
    if (status < 200 || status >= 300) {
      const reason = match[2] ? ` ${heard(proxy, match[2])}` : ''
      settle(proxyError(proxy, `refused to open a tunnel to ${authority} with ${status}${reason}${hintFor(status)}`))
      return
    }
    // The target speaks only when asked: a byte past the head is not the target's.
    if (head.length > end.next) {
      settle(proxyError(proxy, 'sent bytes after its answer to CONNECT'))
      return
    }
    settle(undefined)
  }
  const lost = (cause: Error): void => settle(proxyError(proxy, `could not be reached (${cause.message})`, cause))
  const ended = (): void => settle(proxyError(proxy, 'closed the connection before it answered CONNECT'))
  socket.on('data', read)
  socket.on('error', lost)
  socket.on('end', ended)
  const authorization = proxy.authorization === undefined ? '' : `proxy-authorization: ${proxy.authorization}\r\n`
  socket.write(`CONNECT ${authority} HTTP/1.1\r\nhost: ${authority}\r\n${authorization}\r\n`)
  // Called only before `done`: the connection forgets it once it has its socket.
  return () => {
    // Stryker disable next-line BooleanLiteral: defensive: a destroyed socket emits no data and no end.
    settled = true
    socket.destroy()
  }
}
