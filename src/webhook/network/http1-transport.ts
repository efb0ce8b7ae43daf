import type { ConnectionOptions } from 'node:tls'
import { Http1Attempt } from './http1-attempt.js'
import { Http1Pool } from './http1-pool.js'
import { keepsItsPromise, type WebhookResponse, type WebhookTransport } from './transport.js'

/** Options of {@link createHttp1Transport}. */
export interface Http1TransportOptions {
  /** Connections per receiving URL. @defaultValue 64 */
  connections?: number | undefined
  /** Refuse non-public addresses for every request, not only those of destinations with `blockPrivateNetworks`. @defaultValue false */
  blockPrivateNetworks?: boolean | undefined
  /** TLS options for `https:` receivers, e.g. `{ ca }` to trust a private certificate authority. */
  tls?: Pick<ConnectionOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized'> | undefined
}

/**
 * The Node default: webhook requests over HTTP/1.1 on `node:net` and `node:tls`, one keep-alive
 * pool per receiving URL (a URL that never answers holds only its own connections). A request is
 * one socket write; of the response only the status line and the few header fields that decide
 * the answer and the framing are read, and the body is counted and dropped. Per request it makes
 * a fraction of the garbage a general-purpose client makes for a caller that reads responses:
 * held for hours by a process with many deliveries waiting, that garbage was most of its memory
 * beyond the deliveries themselves. Each attempt ends within its `timeoutMs` (waiting for a
 * connection, connecting, the head and the body together). Redirects are not followed.
 */
export function createHttp1Transport(options: Http1TransportOptions = {}): WebhookTransport {
  const connections = options.connections ?? 64
  /** The pools by each request's `url` as given (the same string every time): no key to build per request. */
  const open = new Map<string, Http1Pool>()
  const guarded = new Map<string, Http1Pool>()
  let closed = false
  return keepsItsPromise({
    send(request) {
      return new Promise<WebhookResponse>((answer) => {
        const attempt = new Http1Attempt(request, answer)
        const isGuarded = options.blockPrivateNetworks === true || request.blockPrivateNetworks === true
        const pools = isGuarded ? guarded : open
        let pool = pools.get(request.url)
        if (pool === undefined) {
          pool = new Http1Pool({ origin: request.origin, guarded: isGuarded, connections, tls: options.tls })
          // Closed: the pool answers at once that it is.
          if (closed) void pool.close()
          else pools.set(request.url, pool)
        }
        pool.submit(attempt)
      })
    },
    async close() {
      closed = true
      await Promise.all([...open.values(), ...guarded.values()].map((pool) => pool.close()))
      open.clear()
      guarded.clear()
    },
  })
}
