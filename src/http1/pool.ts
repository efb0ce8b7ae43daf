import { transportClosed } from '../core/attempt-deadline.js'
import { Queue } from '../core/queue.js'
import type { Http1Attempt } from './attempt.js'
import type { ConnectionOwner, Http1Connection } from './connection.js'

/** What a pool takes from its origin: see `Http1Origin`. */
export interface PoolOrigin {
  /** A refusal for this attempt, when the guard refuses the origin's address; `undefined` otherwise. */
  refusal(): Error | undefined
  /** Connections in use per URL, at most. */
  readonly connections: number
  /** An idle connection of the origin, now carried for `owner`. */
  takeIdle(owner: ConnectionOwner): Http1Connection | undefined
  /** Takes back a connection done with. */
  keep(connection: Http1Connection): void
  /** A new connection to the origin, for `owner`. */
  open(owner: ConnectionOwner): Http1Connection
}

/**
 * The connections one receiving URL has in use, at most its origin's `connections` of them: a
 * request takes an idle connection of the origin, or opens one, or waits in line for one of this
 * URL's. A connection done with goes to the next request in this URL's line, or back to the
 * origin's idle ones.
 */
export class Http1Pool implements ConnectionOwner {
  readonly #origin: PoolOrigin
  readonly #waiting = new Queue<Http1Attempt>()
  readonly #all = new Set<Http1Connection>()
  #closed = false
  #drained: (() => void) | undefined = undefined

  constructor(origin: PoolOrigin) {
    this.#origin = origin
  }

  /** Whether it holds nothing: no connection in use (and so nobody in line: a request waits only while all are in use). */
  get empty(): boolean {
    return this.#all.size === 0
  }

  submit(attempt: Http1Attempt): void {
    const refused = this.#closed ? transportClosed() : this.#origin.refusal()
    if (refused !== undefined) {
      attempt.fail(refused)
      attempt.end()
      return
    }
    const idle = this.#origin.takeIdle(this)
    if (idle !== undefined) this.#carry(idle).start(attempt)
    else if (this.#all.size < this.#origin.connections) this.#open().start(attempt)
    else this.#waiting.push(attempt)
  }

  resend(attempt: Http1Attempt): void {
    if (attempt.ended) return
    // A new connection, not another idle one that may have been closed the same way. The lost one
    // still counts here (its close comes later): at the cap, the attempt waits in line for it.
    // Stryker disable next-line EqualityOperator: one connection over the cap for the moment the lost one takes to close delivers the same.
    if (this.#all.size < this.#origin.connections && !this.#closed) this.#open().start(attempt)
    else this.submit(attempt)
  }

  release(connection: Http1Connection): void {
    const next = this.#nextWaiting()
    if (next !== undefined) {
      connection.start(next)
      return
    }
    this.#all.delete(connection)
    if (this.#closed) connection.destroy()
    else this.#origin.keep(connection)
    this.#drainedIfDone()
  }

  remove(connection: Http1Connection): void {
    this.#all.delete(connection)
    // Room for a connection: an attempt waiting in line takes it (none waits once the pool closes).
    const next = this.#nextWaiting()
    if (next !== undefined) this.#open().start(next)
    else this.#drainedIfDone()
  }

  /** The next attempt in line that still wants a connection. */
  #nextWaiting(): Http1Attempt | undefined {
    let next = this.#waiting.shift()
    while (next?.ended) next = this.#waiting.shift()
    return next
  }

  /**
   * Closes its connections once their attempts end; attempts already answered stop reading their
   * bodies, and attempts waiting in line end unsent: nothing is sent once its transport is closed.
   * Resolves when every connection is closed.
   */
  close(): Promise<void> {
    this.#closed = true
    for (let next = this.#nextWaiting(); next !== undefined; next = this.#nextWaiting()) {
      next.fail(transportClosed())
      next.end()
    }
    for (const connection of this.#all) if (connection.readingBody) connection.destroy()
    return new Promise((resolve) => {
      if (this.#all.size === 0) resolve()
      else this.#drained = resolve
    })
  }

  #drainedIfDone(): void {
    if (this.#drained !== undefined && this.#all.size === 0) this.#drained()
  }

  #carry(connection: Http1Connection): Http1Connection {
    this.#all.add(connection)
    return connection
  }

  #open(): Http1Connection {
    return this.#carry(this.#origin.open(this))
  }
}
