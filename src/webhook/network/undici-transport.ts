import { buildConnector, type Dispatcher, Pool } from 'undici'
import { cutShort } from '../../core/attempt-deadline.js'
import { BodyDrains } from '../../core/body-drains.js'
import { RESPONSE_BODY_CAP } from '../../core/limits.js'
import { peerRefusal, refusal } from '../../core/address-guard.js'
import { publicOnlyLookup } from '../../http1/public-lookup.js'
import { TimedAttempt } from '../../http1/timed-attempt.js'
import { keepsItsPromise, type WebhookRequest, type WebhookResponse, type WebhookTransport } from './transport.js'

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

/**
 * A connector that refuses a literal address that is not public before connecting (a literal is
 * never looked up, so the lookup alone would let it through) and resolves host names through
 * {@link publicOnlyLookup}.
 */
function guardedConnector(connect: UndiciTransportOptions['connect']): buildConnector.connector {
  const connector =
    typeof connect === 'function' ? peerChecked(connect) : buildConnector({ ...connect, lookup: publicOnlyLookup })
  return (options, callback) => {
    const refused = refusal(options.hostname)
    if (refused !== undefined) callback(refused, null)
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
      const refused = peerRefusal(options.hostname, socket.remoteAddress)
      if (refused === undefined) return callback(null, socket)
      socket.destroy()
      callback(refused, null)
    })
  }
}

/** Whether a raw header name is `lower` (a lowercase name of letters and dashes), in any case. */
function isName(name: Buffer, lower: string): boolean {
  if (name.length !== lower.length) return false
  for (let index = 0; index < lower.length; index++) {
    // 0x20 lowercases an ASCII letter and leaves a dash as it is.
    if (((name[index] as number) | 0x20) !== lower.charCodeAt(index)) return false
  }
  return true
}

/**
 * One attempt as undici's dispatcher sees it (its handler): the status and `Retry-After` answer
 * it; the body is then read and dropped, at most {@link RESPONSE_BODY_CAP} bytes (a longer one, or
 * a `Content-Length` over it, is cut, and the connection that carries it is closed); one deadline
 * covers connecting, the headers and the body. What `Pool.request` adds for a caller that reads
 * responses (a response stream, parsed headers, an abort signal and its listeners, an async
 * resource) an attempt does not need, and it was a third of the transport's CPU per request.
 */
class UndiciAttempt extends TimedAttempt<Extract<WebhookResponse, { ok: true }>> {
  /** undici's abort, once the request has a connection. */
  #abort: ((reason: Error) => void) | undefined
  /** Why it was cut short before it had a connection: it is aborted as soon as it gets one. */
  #reason: Error | undefined
  #ended = false
  #read = 0
  readonly #reading: BodyDrains<UndiciAttempt>
  /** Where {@link BodyDrains} holds it while its body is read after the answer. */
  drainIndex = -1

  constructor(
    answer: (response: WebhookResponse) => void,
    timeoutMs: number,
    reading: BodyDrains<UndiciAttempt>,
    signal: AbortSignal | undefined,
  ) {
    super(answer, timeoutMs, signal)
    this.#reading = reading
  }

  /**
   * Ends the attempt now: at its deadline, when it is no longer wanted, or when the transport
   * closes. One still waiting for a connection is answered now, and aborted when it gets one.
   */
  cancel(reason: Error): void {
    if (this.#ended) return
    if (this.#abort !== undefined) this.#abort(reason)
    else {
      this.#reason ??= reason
      this.fail(reason)
    }
  }

  onConnect(abort: (reason: Error) => void): void {
    if (this.#reason !== undefined) abort(this.#reason)
    else this.#abort = abort
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    // 1xx: the answer is still to come.
    if (statusCode < 200) return true
    let retryAfter: string | null = null
    let seen = false
    let length = 0
    for (let index = 0; index < rawHeaders.length; index += 2) {
      const name = rawHeaders[index] as Buffer
      // Only the two names that matter are read, and neither is decoded to compare it.
      if (isName(name, 'retry-after')) {
        // Sent twice, it says nothing usable.
        retryAfter = seen ? null : (rawHeaders[index + 1] as Buffer).toString('latin1')
        seen = true
      } else if (isName(name, 'content-length')) length = Number((rawHeaders[index + 1] as Buffer).toString('latin1'))
    }
    this.#reading.add(this)
    this.answerWith({ ok: true, status: statusCode, retryAfter })
    if (length > RESPONSE_BODY_CAP) this.cancel(cutShort('the response body is over the cap', 'AbortError'))
    return true
  }

  onData(chunk: Buffer): boolean {
    this.#read += chunk.length
    if (this.#read > RESPONSE_BODY_CAP) this.cancel(cutShort('the response body is over the cap', 'AbortError'))
    return true
  }

  onComplete(): void {
    this.end()
  }

  onError(cause: Error): void {
    this.fail(cause)
    this.end()
  }

  /** Done with: answered, and its body read or given up. */
  override end(): void {
    if (this.#ended) return
    this.#ended = true
    super.end()
    this.#reading.remove(this)
  }
}

/**
 * Sends webhook requests through undici's `Pool`, one keep-alive pool per receiving URL (not
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
  /** The attempts answered whose bodies are still being read: closing cuts them short. */
  const reading = new BodyDrains<UndiciAttempt>()
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
    send(request) {
      return new Promise<WebhookResponse>((answer) => {
        const attempt = new UndiciAttempt(answer, request.timeoutMs, reading, request.signal)
        const options: Dispatcher.DispatchOptions = {
          method: 'POST',
          path: request.path,
          headers: request.headers,
          body: request.body,
          // undici's own timers are idle timers with defaults of their own; the deadline bounds the whole attempt.
          headersTimeout: request.timeoutMs,
          bodyTimeout: request.timeoutMs,
        }
        // A pool that cannot take it (closed, a bad option) tells the attempt's onError; one that
        // cannot be made throws: either way the attempt is answered, never rejected.
        try {
          poolOf(request).dispatch(options, attempt)
        } catch (cause) {
          attempt.onError(cause as Error)
        }
      })
    },
    async close() {
      reading.cancelAll()
      await Promise.all(Array.from(pools.values(), (pool) => pool.close()))
      pools.clear()
      byUrl.clear()
      byGuardedUrl.clear()
    },
  })
}
