import { connect as netConnect, isIP, type Socket } from 'node:net'
import { type ConnectionOptions, connect as tlsConnect } from 'node:tls'
import { transportClosed } from '../../core/attempt-deadline.js'
import { monotonicNow } from '../../core/clock.js'
import { Queue } from '../../core/queue.js'
import { setUnrefTimeout } from '../../core/timers.js'
import type { Http1Attempt } from './http1-attempt.js'
import { type ConnectionOwner, Http1Connection } from './http1-connection.js'
import { refusal } from './address-guard.js'
import { publicOnlyLookup } from './public-lookup.js'

/** Where a pool connects, read once from the URL's origin. */
export interface PoolTarget {
  readonly origin: string
  /** Refuse non-public addresses: a literal one before connecting, a name's after resolving it. */
  readonly guarded: boolean
  readonly connections: number
  readonly tls?: Pick<ConnectionOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized'> | undefined
}

/**
 * The keep-alive connections to one receiving URL, at most `connections` of them: a request takes
 * the connection that went idle last (the one least likely to have been closed by the receiver),
 * or opens one, or waits in line for one. Idle connections close after their idle time (one
 * timer per pool) and do not keep the process alive.
 */
export class Http1Pool implements ConnectionOwner {
  readonly #target: PoolTarget
  readonly #host: string
  readonly #port: number
  readonly #tls: boolean
  /** The `host` header: the origin's host and any port it names. */
  readonly #hostHeader: string
  /** The guard is on and the host is a literal non-public address: every attempt is refused without connecting. */
  readonly #refused: boolean
  readonly #idle: Http1Connection[] = []
  readonly #waiting = new Queue<Http1Attempt>()
  readonly #all = new Set<Http1Connection>()
  #sweep: ReturnType<typeof setTimeout> | undefined = undefined
  #closed = false
  #drained: (() => void) | undefined = undefined

  constructor(target: PoolTarget) {
    this.#target = target
    const url = new URL(target.origin)
    this.#tls = url.protocol === 'https:'
    // A literal IPv6 address is written in brackets in a URL, and connected to without them.
    this.#host = url.hostname.replace(/^\[(.*)\]$/, '$1')
    this.#port = url.port === '' ? (this.#tls ? 443 : 80) : Number(url.port)
    this.#hostHeader = url.host
    // Decided once; the refusal itself is made for each attempt, as any other failure is.
    this.#refused = target.guarded && refusal(this.#host) !== undefined
  }

  submit(attempt: Http1Attempt): void {
    if (this.#closed) {
      attempt.fail(transportClosed())
      attempt.end()
    } else if (this.#refused) {
      attempt.fail(refusal(this.#host))
      attempt.end()
    } else {
      const idle = this.#takeIdle()
      if (idle !== undefined) idle.start(attempt)
      else if (this.#all.size < this.#target.connections) this.#open().start(attempt)
      else this.#waiting.push(attempt)
    }
  }

  resend(attempt: Http1Attempt): void {
    if (attempt.ended) return
    // A new connection, not another idle one that may have been closed the same way.
    if (this.#all.size < this.#target.connections && !this.#closed) this.#open().start(attempt)
    else this.submit(attempt)
  }

  release(connection: Http1Connection): void {
    const next = this.#nextWaiting()
    if (next !== undefined) {
      connection.start(next)
      return
    }
    if (this.#closed) {
      connection.destroy()
      return
    }
    connection.idle(monotonicNow())
    this.#idle.push(connection)
    this.#sweep ??= setUnrefTimeout(this.#sweepIdle, connection.idleMs)
  }

  remove(connection: Http1Connection): void {
    this.#all.delete(connection)
    const index = this.#idle.indexOf(connection)
    if (index >= 0) this.#idle.splice(index, 1)
    // Room for a connection: an attempt waiting in line takes it, even while the pool closes.
    const next = this.#nextWaiting()
    if (next !== undefined) this.#open().start(next)
    else if (this.#drained !== undefined && this.#all.size === 0) this.#drained()
  }

  /** The next attempt in line that still wants a connection. */
  #nextWaiting(): Http1Attempt | undefined {
    let next = this.#waiting.shift()
    while (next?.ended) next = this.#waiting.shift()
    return next
  }

  /**
   * Closes idle connections now and the others once their attempts end; attempts already
   * answered stop reading their bodies. Resolves when every connection is closed.
   */
  close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#sweep)
    for (const connection of this.#idle.splice(0)) connection.destroy()
    for (const connection of this.#all) if (connection.readingBody) connection.destroy()
    return new Promise((resolve) => {
      if (this.#all.size === 0) resolve()
      else this.#drained = resolve
    })
  }

  #takeIdle(): Http1Connection | undefined {
    const now = monotonicNow()
    for (let connection = this.#idle.pop(); connection !== undefined; connection = this.#idle.pop()) {
      if (connection.usable && connection.idleLeft(now) > 0) return connection
      connection.destroy()
    }
    return undefined
  }

  readonly #sweepIdle = (): void => {
    this.#sweep = undefined
    const now = monotonicNow()
    let soonest = Number.POSITIVE_INFINITY
    for (let index = this.#idle.length - 1; index >= 0; index--) {
      const connection = this.#idle[index] as Http1Connection
      const left = connection.idleLeft(now)
      if (left <= 0) {
        this.#idle.splice(index, 1)
        connection.destroy()
      } else soonest = Math.min(soonest, left)
    }
    if (soonest !== Number.POSITIVE_INFINITY) this.#sweep = setUnrefTimeout(this.#sweepIdle, soonest)
  }

  #open(): Http1Connection {
    const lookup = this.#target.guarded ? publicOnlyLookup : undefined
    const socket: Socket = this.#tls
      ? tlsConnect({
          ...this.#target.tls,
          host: this.#host,
          port: this.#port,
          ...(isIP(this.#host) === 0 ? { servername: this.#host } : {}),
          ALPNProtocols: ['http/1.1'],
          ...(lookup ? { lookup } : {}),
        })
      : netConnect({ host: this.#host, port: this.#port, ...(lookup ? { lookup } : {}) })
    socket.setNoDelay(true)
    const connection = new Http1Connection(socket, this, this.#hostHeader)
    this.#all.add(connection)
    return connection
  }
}
