import { connect as netConnect, isIP, type Socket } from 'node:net'
import { type ConnectionOptions, connect as tlsConnect } from 'node:tls'
import { monotonicNow } from '../core/clock.js'
import { SweptMap } from '../core/swept-map.js'
import { setUnrefTimeout } from '../core/timers.js'
import { refusal } from '../core/address-guard.js'
import { addressOf, type OriginAddress } from './address.js'
import { type ConnectionOwner, Http1Connection } from './connection.js'
import { Http1Pool, type PoolOrigin } from './pool.js'
import type { ProxyAddress } from './proxy.js'
import { publicOnlyLookup } from './public-lookup.js'
import type { TlsSessions } from './tls-sessions.js'
import { openTunnel } from './tunnel.js'

/** Where an origin's connections go, and how many one of its URLs may have at once. */
export interface OriginTarget {
  readonly origin: string
  /** Refuse non-public addresses: a literal one before connecting, a name's after resolving it. */
  readonly guarded: boolean
  /** Connections in use per URL, at most. */
  readonly connections: number
  /** TLS options of its `https:` connections: which ones a user may give is the transport's to say. */
  readonly tls?: ConnectionOptions | undefined
  /** Where the origin's TLS session is kept between connections, to resume with. */
  readonly sessions?: TlsSessions | undefined
  /**
   * The egress proxy its connections tunnel through, with HTTP CONNECT. The guard then judges only
   * a literal address: the proxy resolves names, and is trusted to refuse what it must.
   */
  readonly proxy?: ProxyAddress | undefined
}

/**
 * One origin's connections: the idle ones, shared by every URL of the origin, and a
 * {@link Http1Pool} per URL for the ones in use. A connection is a connection to the origin, so a
 * request to any of its URLs may take the one that went idle last; but what is in use, and the
 * line for it, stay per URL: a URL that never answers holds only connections it took, and its
 * line holds up no other URL's requests. Idle connections close after their idle time (one timer
 * per origin) and do not keep the process alive.
 */
export class Http1Origin implements ConnectionOwner, PoolOrigin {
  readonly target: OriginTarget
  readonly #address: OriginAddress
  /** The guard is on and the host is a literal non-public address: every attempt is refused without connecting. */
  readonly #refused: boolean
  readonly #idle: Http1Connection[] = []
  /** Each URL's connections in use; a URL with none and nobody in line holds nothing. */
  readonly #pools = new SweptMap<string, Http1Pool>((pool) => pool.empty)
  #sweep: ReturnType<typeof setTimeout> | undefined = undefined

  constructor(target: OriginTarget) {
    this.target = target
    this.#address = addressOf(target.origin)
    // Decided once; the refusal itself is made for each attempt, as any other failure is.
    this.#refused = target.guarded && refusal(this.#address.host) !== undefined
  }

  refusal(): Error | undefined {
    return this.#refused ? refusal(this.#address.host) : undefined
  }

  get connections(): number {
    return this.target.connections
  }

  /** Whether it holds nothing: no idle connection, and none in use or waited for. */
  get empty(): boolean {
    if (this.#idle.length > 0) return false
    for (const pool of this.#pools.values()) if (!pool.empty) return false
    return true
  }

  /** The pool of `url`, one of this origin's URLs. */
  pool(url: string): Http1Pool {
    let pool = this.#pools.get(url)
    if (pool === undefined) {
      // No pool in use is swept: a pool is only taken here, and used at once.
      this.#pools.sweepIfGrown()
      pool = new Http1Pool(this)
      this.#pools.set(url, pool)
    }
    return pool
  }

  /** The connection that went idle last and is still open (the one least likely to have been closed by the receiver), for `owner`. */
  takeIdle(owner: ConnectionOwner): Http1Connection | undefined {
    const now = monotonicNow()
    for (let connection = this.#idle.pop(); connection !== undefined; connection = this.#idle.pop()) {
      if (connection.usable && connection.idleLeft(now) > 0) {
        connection.owner = owner
        return connection
      }
      connection.destroy()
    }
    return undefined
  }

  /** Keeps `connection`, done with, for the next request to any URL of the origin. */
  keep(connection: Http1Connection): void {
    // Never once closed: its pools are closed first, and a closed pool destroys what it is done with.
    connection.owner = this
    connection.idle(monotonicNow())
    this.#idle.push(connection)
    this.#sweep ??= setUnrefTimeout(this.#sweepIdle, connection.idleMs)
  }

  /** A new connection to the origin, for `owner`. */
  open(owner: ConnectionOwner): Http1Connection {
    const { host, port, tls, hostHeader } = this.#address
    const proxy = this.target.proxy
    if (proxy !== undefined) return this.#openTunnel(owner, proxy)
    const lookup = this.target.guarded ? publicOnlyLookup : undefined
    const socket: Socket = tls
      ? this.#tlsConnect({ ...this.#tlsOptions(), port, ...(lookup ? { lookup } : {}) })
      : netConnect({ host, port, ...(lookup ? { lookup } : {}) })
    // Stryker disable next-line BooleanLiteral: a request is one write, so Nagle's delay changes when bytes leave, never what is delivered.
    socket.setNoDelay(true)
    return new Http1Connection(socket, owner, hostHeader)
  }

  /**
   * A new connection through `proxy`: a CONNECT tunnel to the origin's host and port, then TLS to
   * the origin inside it for `https:`, with the origin's name checked as without a proxy. Until
   * the tunnel is open the connection holds its request; the proxy's failure is the attempt's.
   */
  #openTunnel(owner: ConnectionOwner, proxy: ProxyAddress): Http1Connection {
    const { host, port, tls, hostHeader } = this.#address
    const connection = new Http1Connection(undefined, owner, hostHeader)
    const authority = `${isIP(host) === 6 ? `[${host}]` : host}:${port}`
    const abort = openTunnel(proxy, authority, this.target.tls, (error, socket) => {
      if (socket === undefined) connection.setupFailed(error as Error)
      else connection.attach(tls ? this.#tlsConnect({ ...this.#tlsOptions(), socket }) : socket)
    })
    connection.settingUp(abort)
    return connection
  }

  /** The TLS options of a connection to the origin: the user's, the origin's name, HTTP/1.1. */
  #tlsOptions(): ConnectionOptions {
    const { host } = this.#address
    return {
      ...this.target.tls,
      // With a socket given (a tunnel), `host` is still the name the certificate is checked against.
      host,
      ...(isIP(host) === 0 ? { servername: host } : {}),
      // Stryker disable next-line StringLiteral,ArrayDeclaration: an empty protocol name aborts the process (an assertion in Node's TLS binding).
      ALPNProtocols: ['http/1.1'],
    }
  }

  /** A TLS connection that resumes the origin's last session, and keeps the session it gets for the next one. */
  #tlsConnect(options: ConnectionOptions): Socket {
    const { origin, sessions } = this.target
    if (sessions === undefined) return tlsConnect(options)
    const socket = tlsConnect({ ...options, session: sessions.get(origin) })
    // TLS 1.3 sends its tickets after the handshake, maybe more than one: the last is kept. It is
    // kept only from a receiver whose certificate and name were accepted, because Node does not
    // check the name again on a resumed session. Node hands sessions over after that check, in 1.2
    // and 1.3 alike (a test of each); the guard holds should that change.
    socket.on('session', (next: Buffer) => {
      // Stryker disable next-line ConditionalExpression: equivalent while Node emits 'session' after the check, as said above.
      if (socket.authorized) sessions.set(origin, next)
    })
    return socket
  }

  // An idle connection carries no request: it is never released or asked to send again.
  // Stryker disable next-line BlockStatement: never called.
  release(): void {}

  // Stryker disable next-line BlockStatement: never called.
  resend(): void {}

  remove(connection: Http1Connection): void {
    const index = this.#idle.indexOf(connection)
    if (index >= 0) this.#idle.splice(index, 1)
  }

  /**
   * Closes idle connections now and the others once their attempts end; attempts already
   * answered stop reading their bodies. Resolves when every connection is closed.
   */
  async close(): Promise<void> {
    clearTimeout(this.#sweep)
    for (const connection of this.#idle.splice(0)) connection.destroy()
    await Promise.all(Array.from(this.#pools.values(), (pool) => pool.close()))
  }

  readonly #sweepIdle = (): void => {
    this.#sweep = undefined
    const now = monotonicNow()
    let soonest = Number.POSITIVE_INFINITY
    for (let index = this.#idle.length - 1; index >= 0; index--) {
      const connection = this.#idle[index] as Http1Connection
      const left = connection.idleLeft(now)
      // Stryker disable next-line EqualityOperator: a connection with no time left at the very millisecond goes at the next sweep, a millisecond later.
      if (left <= 0) {
        this.#idle.splice(index, 1)
        connection.destroy()
      } else soonest = Math.min(soonest, left)
    }
    if (soonest !== Number.POSITIVE_INFINITY) this.#sweep = setUnrefTimeout(this.#sweepIdle, soonest)
  }
}
