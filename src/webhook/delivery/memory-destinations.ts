import { DestinationConflictError } from './destination-conflict-error.js'
import {
  byId,
  ifVersionOf,
  checkDestinationId,
  resolveNewDestination,
  type Destination,
  type ResolvedDestination,
  type StoredDestination,
} from './destination-record.js'
import type { Route } from './route.js'

/** Options of {@link MemoryDestinations.set}. */
export interface SetMemoryDestinationOptions {
  /** Write only if the destination has this `version` (0: only if there is none). */
  ifVersion?: number | undefined
}

interface Entry {
  readonly stored: StoredDestination
  readonly route: Route
}

/**
 * The destinations of one in-memory engine, reached as `WebhookDestination.destinations`: the
 * same calls as the BullMQ registry (`WebhookQueue.destinations`), answered at once rather than
 * in promises. A change reaches the events already waiting at their next attempt: see
 * docs/destinations.md.
 *
 * @example
 * ```ts
 * import { WebhookDestination } from 'eventwire/webhook'
 *
 * const engine = new WebhookDestination({ timeoutMs: 5_000 })
 * engine.destinations.set({ id: 'acme', webhooks: [{ url: 'https://hooks.acme.example/in' }], sharedSecret: 'acme-s3cret' })
 * const result = await engine.deliver({ type: 'track', userId: 'u1', event: 'Paid' }, { destination: 'acme' })
 * console.log(result.destination, result.status)
 * ```
 */
export class MemoryDestinations {
  readonly #entries = new Map<string, Entry>()
  readonly #routeOf: (destination: ResolvedDestination) => Route
  /** Grows with every change, as the BullMQ registry's version does. */
  #version = 0

  /** @internal Made by `WebhookDestination`; `routeOf` builds how a destination's events are sent. */
  constructor(routeOf: (destination: ResolvedDestination) => Route) {
    this.#routeOf = routeOf
  }

  /**
   * Adds a destination, or replaces the one with its id, and returns it as stored. Events already
   * taken keep their per-URL state: a URL still listed goes on where it was (with its new
   * headers), a URL added starts at the event's next attempt within its retry window, a URL
   * removed is not sent to again.
   *
   * @throws `OptionsError` naming the field it cannot use (nothing is changed);
   *   {@link DestinationConflictError} when `ifVersion` does not match.
   */
  set(destination: Destination, options: SetMemoryDestinationOptions = {}): StoredDestination {
    const { resolved, record } = resolveNewDestination(destination)
    const ifVersion = ifVersionOf(options)
    const before = this.#entries.get(record.id)
    if (ifVersion !== undefined && ifVersion !== (before?.stored.version ?? 0))
      throw new DestinationConflictError(record.id, ifVersion, before?.stored.version ?? 0)
    const stored: StoredDestination = { ...record, version: ++this.#version, updatedAt: Date.now() }
    const route = this.#routeOf(resolved)
    if (before !== undefined) before.route.next = route
    this.#entries.set(record.id, { stored, route })
    return stored
  }

  /** The destination with this id, or `undefined`. @throws `OptionsError` for an id no destination can have. */
  get(id: string): StoredDestination | undefined {
    checkDestinationId(id)
    return this.#entries.get(id)?.stored
  }

  /** Every destination, by id (`unreadable` is always empty in memory: it is there to match the BullMQ registry). */
  list(): { destinations: StoredDestination[]; unreadable: Array<{ id: string; problem: string }> } {
    const destinations = Array.from(this.#entries.values(), (entry) => entry.stored)
    destinations.sort(byId)
    return { destinations, unreadable: [] }
  }

  /**
   * Stops a destination: `deliver()` to it resolves `'failed'` at once, and each event of it still
   * waiting ends at its next attempt, each URL with `ERR_DESTINATION_DISABLED`.
   *
   * @returns the destination as stored, or `undefined` when there is none.
   */
  disable(id: string): StoredDestination | undefined {
    return this.#switch(id, false)
  }

  /** Lets a disabled destination send again. @returns it as stored, or `undefined` when there is none. */
  enable(id: string): StoredDestination | undefined {
    return this.#switch(id, true)
  }

  /**
   * Removes a destination: `deliver()` to it is refused (`UnknownDestinationError`), and each of its
   * events still waiting ends at its next attempt, each URL with `ERR_UNKNOWN_DESTINATION`.
   *
   * @returns whether there was one.
   */
  delete(id: string): boolean {
    checkDestinationId(id)
    const entry = this.#entries.get(id)
    if (entry === undefined) return false
    this.#version++
    this.#entries.delete(id)
    entry.route.next = { ...entry.route, ended: 'ERR_UNKNOWN_DESTINATION', next: undefined }
    return true
  }

  /** @internal How events of `id` are sent now; `undefined` when there is no such destination. */
  routeOf(id: string): Route | undefined {
    return this.#entries.get(id)?.route
  }

  #switch(id: string, enabled: boolean): StoredDestination | undefined {
    const stored = this.get(id)
    if (stored === undefined || stored.enabled === enabled) return stored
    const { version: _version, updatedAt: _updatedAt, ...settings } = stored
    return this.set({ ...settings, enabled })
  }
}
