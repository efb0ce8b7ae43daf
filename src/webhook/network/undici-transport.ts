import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { buildConnector, Pool } from 'undici'
import { AttemptAborter, BodyDrains, RESPONSE_BODY_CAP, startDeadline } from '../../core/attempt-deadline.js'
import { blockedRangeOf } from './private-address.js'
import { keepsItsPromise } from '../delivery/callbacks.js'
import { blockedAddressError, classifyFailure, type WebhookRequest, type WebhookTransport } from './transport.js'

/** Options of {@link createUndiciTransport}. */
export interface UndiciTransportOptions {
  /** Connections per receiving URL. @defaultValue 64 */
  connections?: number | undefined
  /**
   * TLS and socket options, e.g. `{ ca }` for receivers behind a private certificate authority. A
   * connector function of your own resolves host names itself, so when the guard is on the address
   * its socket reached is checked once it has connected, and a socket to a non-public address is
   * destroyed before any byte is sent.
   */
  connect?: Pool.Options['connect'] | undefined
  /**
   * Refuse every connection to a loopback, private or link-local address, even for destinations
   * without `blockPrivateNetworks` (which turns the same check on for its own requests).
   * @defaultValue false
   */
  blockPrivateNetworks?: boolean | undefined
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/** `dns.lookup`, refusing every answer that contains a non-public address (checked after resolution, so DNS tricks do not get through). */
function publicOnlyLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '')
    for (const entry of addresses) {
      const range = blockedRangeOf(entry.address)
      if (range !== undefined)
        return callback(blockedAddressError(`${hostname} resolves to ${entry.address}`, range), '')
    }
    const [first] = addresses
    if (options.all) callback(null, addresses)
    else if (first) callback(null, first.address, first.family)
    else callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '')
  })
}

/**
 * A connector that refuses a literal address that is not public before connecting (a literal is
 * never looked up, so the lookup alone would let it through) and resolves host names through
 * {@link publicOnlyLookup}.
 */
function guardedConnector(connect: UndiciTransportOptions['connect']): buildConnector.connector {
  const connector =
    typeof connect === 'function' ? peerChecked(connect) : buildConnector({ ...connect, lookup: publicOnlyLookup })
  return (options, callback) => {
    const range = blockedRangeOf(options.hostname)
    if (range !== undefined) callback(blockedAddressError(options.hostname, range), null)
    else connector(options, callback)
  }
}

/**
 * A connector function of the user's, whose sockets are checked once connected: it may resolve
 * names any way it likes (or ignore them), so only the address it reached can be trusted.
 */
function peerChecked(connect: buildConnector.connector): buildConnector.connector {
  return (options, callback) => {
    connect(options, (error, socket) => {
      if (error || !socket) return callback(error, socket)
      const address = socket.remoteAddress
      const range = address === undefined ? 'an unknown address' : blockedRangeOf(address)
      if (range === undefined) return callback(null, socket)
      socket.destroy()
      callback(
        blockedAddressError(
          `${options.hostname} (connected to ${address ?? 'an address the socket does not report'})`,
          range,
        ),
        null,
      )
    })
  }
}

/** undici's `signal` option: it takes anything with `aborted`, `reason` and `abort` listeners (see {@link AttemptAborter}). */
const asSignal = (aborter: AttemptAborter): AbortSignal => aborter as unknown as AbortSignal

/**
 * Sends webhook requests with undici's `Pool.request`, one keep-alive pool per receiving URL (not
 * per origin: a URL that never answers must not hold the connections a healthy URL on the same
 * host needs): the Node default, several times faster per request than `fetch`. Redirects are not followed.
 * Each attempt ends within its `timeoutMs` (connecting, headers and body together); the status
 * decides, and at most 64 KiB of the body is read, after the attempt, to reuse the connection.
 * Requests with `blockPrivateNetworks` go through pools that refuse non-public addresses.
 * Node only: import it from `eventwire/webhook/node`. Pass one to a destination to configure the
 * connection, e.g. to trust receivers whose certificates a private certificate authority issued.
 *
 * @example
 * ```ts
 * import { readFileSync } from 'node:fs'
 * import { WebhookDestination } from 'eventwire/webhook'
 * import { createUndiciTransport } from 'eventwire/webhook/node'
 *
 * const destination = new WebhookDestination({
 *   webhooks: [{ url: 'https://hooks.internal.example/in' }],
 *   sharedSecret: 's3cret',
 *   transport: createUndiciTransport({ connect: { ca: readFileSync('private-ca.pem') } }),
 * })
 * ```
 */
export function createUndiciTransport(options: UndiciTransportOptions = {}): WebhookTransport {
  const pools = new Map<string, Pool>()
  /** The pools by each request's `url` as given (the same string every time): no key to build per request. */
  const byUrl = new Map<string, Pool>()
  const byGuardedUrl = new Map<string, Pool>()
  const drains = new BodyDrains()
  const poolFor = (origin: string, path: string, guarded: boolean): Pool => {
    const key = `${guarded ? 'guarded ' : ''}${origin}${path}`
    let pool = pools.get(key)
    if (!pool) {
      const connect = guarded ? guardedConnector(options.connect) : options.connect
      pool = new Pool(origin, { connections: options.connections ?? 64, ...(connect ? { connect } : {}) })
      pools.set(key, pool)
    }
    return pool
  }
  const poolOf = (request: WebhookRequest): Pool => {
    const guarded = options.blockPrivateNetworks === true || request.blockPrivateNetworks === true
    const known = guarded ? byGuardedUrl : byUrl
    let pool = known.get(request.url)
    if (pool === undefined) {
      pool = poolFor(request.origin, request.path, guarded)
      known.set(request.url, pool)
    }
    return pool
  }
  return keepsItsPromise({
    async send(request) {
      const deadline = startDeadline(request.timeoutMs, new AttemptAborter())
      // No longer wanted (another URL accepted the event): end it now, freeing its connection.
      const unwanted = () => deadline.cancel()
      request.signal?.addEventListener('abort', unwanted, { once: true })
      try {
        const response = await poolOf(request).request({
          method: 'POST',
          path: request.path,
          headers: request.headers,
          body: request.body,
          signal: asSignal(deadline.signal),
          // undici's own timers are idle timers with defaults of their own; the deadline bounds the whole attempt.
          headersTimeout: request.timeoutMs,
          bodyTimeout: request.timeoutMs,
        })
        // At most RESPONSE_BODY_CAP bytes are read and dropped; past that (or a Content-Length over
        // it) undici destroys the body, and the connection that still carries the rest.
        drains.start(deadline, () =>
          response.body.dump({ limit: RESPONSE_BODY_CAP, signal: asSignal(deadline.signal) }),
        )
        const retryAfter = response.headers['retry-after']
        return { ok: true, status: response.statusCode, retryAfter: typeof retryAfter === 'string' ? retryAfter : null }
      } catch (cause) {
        deadline.end()
        return { ok: false, failure: deadline.expired() ? 'timeout' : classifyFailure(cause), cause }
      } finally {
        request.signal?.removeEventListener('abort', unwanted)
      }
    },
    async close() {
      drains.cancelAll()
      await Promise.all(Array.from(pools.values(), (pool) => pool.close()))
      pools.clear()
      byUrl.clear()
      byGuardedUrl.clear()
    },
  })
}
