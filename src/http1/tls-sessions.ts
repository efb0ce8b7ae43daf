/**
 * Most origins whose TLS session a transport keeps. A session is a ticket of a few hundred bytes
 * to 2 KB: the cache stays under about 2 MB however many receivers a platform sends to.
 */
export const MAX_TLS_SESSIONS = 1_000

/**
 * The last TLS session of each origin, to resume with on the next connection: a receiver that
 * takes bursts more than the idle time apart gets a new connection each burst, and a resumed
 * handshake skips the certificate and its signature checks (the costly part of a full one). The
 * least recently stored go first past {@link MAX_TLS_SESSIONS}. The server decides whether a
 * ticket is still good; one it refuses costs a full handshake, as no ticket would. Kept apart
 * from the origins because an origin with no connection is dropped, and its session with it.
 *
 * @example
 * ```ts
 * const sessions = new TlsSessions()
 * const socket = tls.connect({ host, port, session: sessions.get(origin) })
 * socket.on('session', (session) => sessions.set(origin, session))
 * ```
 */
export class TlsSessions {
  readonly #sessions = new Map<string, Buffer>()

  constructor(readonly max = MAX_TLS_SESSIONS) {}

  get size(): number {
    return this.#sessions.size
  }

  /** The session last stored for `origin`, if it is still kept. */
  get(origin: string): Buffer | undefined {
    return this.#sessions.get(origin)
  }

  /** Keeps `session` as `origin`'s, the newest; drops the oldest one past the cap. */
  set(origin: string, session: Buffer): void {
    // Deleted first so that the map's order is the order of storing: the first key is the oldest.
    this.#sessions.delete(origin)
    this.#sessions.set(origin, session)
    if (this.#sessions.size > this.max) this.#sessions.delete(this.#sessions.keys().next().value as string)
  }
}
