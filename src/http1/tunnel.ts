import { connect as netConnect, type Socket } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import { PROXY_FAILURE_CODE } from '../core/transport-failure.js'
import type { ProxyAddress } from './proxy.js'
import { MAX_HEAD_BYTES } from './response-reader.js'

/**
 * An egress proxy's own failure: it could not be reached, or it did not open the tunnel. Nothing
 * reached the receiver; the attempt fails as the proxy's (`failure: 'proxy'`).
 */
export function proxyError(proxy: ProxyAddress, what: string, cause?: unknown): Error {
  return Object.assign(new Error(`the proxy ${proxy.name} ${what}`, cause === undefined ? {} : { cause }), {
    code: PROXY_FAILURE_CODE,
  })
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
 * what aborts it; `done` is not called after an abort.
 */
export function openTunnel(
  proxy: ProxyAddress,
  authority: string,
  done: (error: Error | undefined, socket: Socket | undefined) => void,
): () => void {
  const socket: Socket = proxy.tls
    ? tlsConnect({ host: proxy.host, port: proxy.port, servername: proxy.host, ALPNProtocols: ['http/1.1'] })
    : netConnect({ host: proxy.host, port: proxy.port })
  socket.setNoDelay(true)
  let settled = false
  let head = Buffer.alloc(0)
  const settle = (error: Error | undefined): void => {
    if (settled) return
    settled = true
    socket.off('data', read)
    socket.off('error', lost)
    socket.off('end', ended)
    if (error === undefined) {
      done(undefined, socket)
      return
    }
    socket.destroy()
    done(error, undefined)
  }
  const read = (chunk: Buffer): void => {
    head = Buffer.concat([head, chunk])
    const end = head.indexOf('\r\n\r\n')
    if (end < 0) {
      if (head.length > MAX_HEAD_BYTES)
        settle(proxyError(proxy, `answered CONNECT with a head over ${MAX_HEAD_BYTES} bytes`))
      return
    }
    const statusLine = head.toString('latin1', 0, head.indexOf('\r\n'))
    const match = /^HTTP\/1\.[01] (\d\d\d)(?: (.*))?$/.exec(statusLine)
    if (match === null) {
      settle(proxyError(proxy, `answered CONNECT with ${JSON.stringify(statusLine.slice(0, 40))}, not HTTP/1.1`))
      return
    }
    const status = Number(match[1])
    if (status < 200 || status > 299) {
      const reason = match[2] ? ` ${match[2].slice(0, 60)}` : ''
      settle(proxyError(proxy, `refused to open a tunnel to ${authority} with ${status}${reason}${hintFor(status)}`))
      return
    }
    // The target speaks only when asked: a byte past the head is not the target's.
    if (head.length > end + 4) {
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
  return () => {
    if (settled) return
    settled = true
    socket.destroy()
  }
}
