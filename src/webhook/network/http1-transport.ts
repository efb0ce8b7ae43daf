import type { ConnectionOptions } from 'node:tls'
import { checkOptionNames, integerOption } from '../../core/option-checks.js'
import { Http1Agent } from '../../http1/agent.js'
import { Http1Attempt } from '../../http1/attempt.js'
import { proxyRule } from '../../http1/proxy.js'
import { keepsItsPromise, type WebhookResponse, type WebhookTransport } from './transport.js'

/** Options of {@link createHttp1Transport}. */
export interface Http1TransportOptions {
  /** Connections in use per receiving URL; idle ones are shared by the URLs of an origin. @defaultValue 64 */
  connections?: number | undefined
  /** Refuse non-public addresses for every request, not only those of destinations with `blockPrivateNetworks`. @defaultValue false */
  blockPrivateNetworks?: boolean | undefined
  /**
   * TLS options for `https:` receivers: `ca` to trust a private certificate authority, `cert` and
   * `key` (with `passphrase`) for a client certificate. `rejectUnauthorized: false` turns the
   * certificate check off: for tests only.
   */
  tls?: Pick<ConnectionOptions, 'ca' | 'cert' | 'key' | 'passphrase' | 'rejectUnauthorized'> | undefined
  /**
   * An egress proxy for every request: `http://host:port` or `https://host:port`, with
   * `user:password@` for Basic credentials. Requests go through it in an HTTP CONNECT tunnel; TLS
   * to an `https:` receiver runs inside the tunnel, and the receiver's name is checked as without
   * one. `'env'` reads `HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY` (lowercase names too) once, when
   * the transport is made. The proxy's own failures are `ERR_PROXY`: retried, and never counted
   * against a receiver's breaker. With `blockPrivateNetworks`, a literal address is refused before
   * the tunnel; a name is the proxy's to resolve, and to refuse. @defaultValue none
   */
  proxy?: string | undefined
}

// Typed by the options themselves: a name added to one and not the other does not compile.
const OPTION_NAMES: Record<keyof Http1TransportOptions, true> = {
  connections: true,
  blockPrivateNetworks: true,
  tls: true,
  proxy: true,
}
const TLS_OPTION_NAMES: Record<keyof NonNullable<Http1TransportOptions['tls']>, true> = {
  ca: true,
  cert: true,
  key: true,
  passphrase: true,
  rejectUnauthorized: true,
}

/**
 * The Node default: webhook requests over HTTP/1.1 on `node:net` and `node:tls`, with keep-alive
 * connections shared by the URLs of one origin while idle, and counted per receiving URL while in
 * use (a URL that never answers holds only the connections it took). A request is one socket
 * write; of the response only the status line and the few header fields that decide the answer
 * and the framing are read, and the body is counted and dropped. Per request it makes a fraction
 * of the garbage a general-purpose client makes for a caller that reads responses: held for hours
 * by a process with many deliveries waiting, that garbage was most of its memory beyond the
 * deliveries themselves. Each attempt ends within its `timeoutMs` (waiting for a connection,
 * connecting, the head and the body together). Redirects are not followed. A new connection to
 * an HTTPS receiver resumes the TLS session of the last one.
 *
 * Pass it as `transport` for TLS options of your own; `WebhookDestination` makes one with the
 * defaults otherwise.
 *
 * @throws `OptionsError` for an option it does not know, or a count of connections it cannot use.
 * @example
 * ```ts
 * import { readFileSync } from 'node:fs'
 * import { WebhookDestination } from 'eventwire/webhook'
 * import { createHttp1Transport } from 'eventwire/webhook/node'
 *
 * // A receiver whose certificate a private CA signed, that asks for a client certificate too.
 * const destination = new WebhookDestination({
 *   webhooks: [{ url: 'https://hooks.internal.example/in' }],
 *   transport: createHttp1Transport({
 *     tls: { ca: readFileSync('private-ca.pem'), cert: readFileSync('client.pem'), key: readFileSync('client.key') },
 *   }),
 * })
 * ```
 */
export function createHttp1Transport(options: Http1TransportOptions = {}): WebhookTransport {
  checkOptionNames(options as Record<string, unknown>, OPTION_NAMES)
  checkOptionNames((options.tls ?? {}) as Record<string, unknown>, TLS_OPTION_NAMES, {}, 'tls.')
  const agent = new Http1Agent({
    connections: integerOption('connections', options.connections, 64, 1, 100_000),
    tls: options.tls,
    proxy: proxyRule('proxy', options.proxy),
  })
  const guardAll = options.blockPrivateNetworks === true
  return keepsItsPromise({
    send(request) {
      return new Promise<WebhookResponse>((answer) => {
        // The status and Retry-After alone: the head's other fields are the stack's, not the engine's.
        const attempt = new Http1Attempt(request, (response) =>
          answer(response.ok ? { ok: true, status: response.status, retryAfter: response.retryAfter } : response),
        )
        agent.send(attempt, guardAll || request.blockPrivateNetworks === true)
      })
    },
    close: () => agent.close(),
  })
}
