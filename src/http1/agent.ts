import type { ConnectionOptions } from 'node:tls'
import { transportClosed } from '../core/attempt-deadline.js'
import { SweptMap } from '../core/swept-map.js'
import type { Http1Attempt } from './attempt.js'
import { Http1Origin } from './origin.js'
import type { ProxyRule } from './proxy.js'
import { TlsSessions } from './tls-sessions.js'

/** What an {@link Http1Agent} is made with. */
export interface Http1AgentOptions {
  /** Connections in use per URL, at most. */
  readonly connections: number
  /** TLS options of every `https:` connection (a private CA, a client certificate). */
  readonly tls?: ConnectionOptions | undefined
  /** The egress proxy of each origin, decided once per origin; none without it. */
  readonly proxy?: ProxyRule | undefined
}

/**
 * Sends attempts to any origin, as undici's `Agent` does: an {@link Http1Origin} per origin (and
 * another per origin for guarded attempts, which refuse non-public addresses), made when first
 * needed and dropped once many have come while it holds nothing. TLS sessions outlive the
 * origins: bursts further apart than the idle time resume the last session.
 */
export class Http1Agent {
  readonly #options: Http1AgentOptions
  // By each request's `origin` as given (the same string every time): no key to build per request.
  readonly #open = new SweptMap<string, Http1Origin>((origin) => origin.empty)
  readonly #guarded = new SweptMap<string, Http1Origin>((origin) => origin.empty)
  readonly #sessions = new TlsSessions()
  #closed = false

  constructor(options: Http1AgentOptions) {
    this.#options = options
  }

  /** Sends `attempt` on a connection to its origin; `guarded`: refuse an address that is not public. */
  send(attempt: Http1Attempt, guarded: boolean): void {
    if (this.#closed) {
      attempt.fail(transportClosed())
      attempt.end()
      return
    }
    const { origin: name, url } = attempt.request
    const origins = guarded ? this.#guarded : this.#open
    let origin = origins.get(name)
    if (origin === undefined) {
      origins.sweepIfGrown()
      origin = new Http1Origin({
        origin: name,
        guarded,
        connections: this.#options.connections,
        tls: this.#options.tls,
        sessions: this.#sessions,
        proxy: this.#options.proxy?.(name),
      })
      origins.set(name, origin)
    }
    origin.pool(url).submit(attempt)
  }

  /** Closes every connection once its attempt ends; sends nothing after. Resolves when all are closed. */
  async close(): Promise<void> {
    this.#closed = true
    await Promise.all([...this.#open.values(), ...this.#guarded.values()].map((origin) => origin.close()))
    this.#open.clear()
    this.#guarded.clear()
  }
}
