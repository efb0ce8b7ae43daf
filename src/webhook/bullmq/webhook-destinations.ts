import { OptionsError } from '../../core/errors/options-error.js'
import { DestinationConflictError } from '../delivery/destination-conflict-error.js'
import {
  resolveNewDestination,
  byId,
  ifVersionOf,
  checkDestinationId,
  type Destination,
  type StoredDestination,
} from '../delivery/destination-record.js'
import { readStored } from './destination-cache.js'
import { destinationKey, type Registry, type RegistryStore } from './registry.js'

/** Options of {@link WebhookDestinations.set}. */
export interface SetDestinationOptions {
  /**
   * Write only if the stored destination has this `version` (0: only if there is none): a change
   * made from two places at once then fails for one of them instead of undoing the other's.
   */
  ifVersion?: number | undefined
}

/** Times a read-modify-write is tried again after another writer came first. */
const MAX_TRIES = 5

/**
 * The registry of destinations, in the queue's Redis: what producers route to and workers
 * deliver to, one truth for every process. A change reaches every producer and worker within a
 * second, without a restart. Reached as `WebhookQueue.destinations`.
 *
 * Secrets are kept in Redis as given: whoever can read the queue's Redis can read them, as they
 * can read every event's body.
 *
 * @example
 * ```ts
 * import { WebhookQueue } from 'eventwire/webhook/bullmq'
 *
 * const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: 6379 } })
 * await queue.destinations.set({
 *   id: 'acme',
 *   webhooks: [{ url: 'https://hooks.acme.example/in', headers: { 'X-Team': 'data' } }],
 *   sharedSecret: 'acme-s3cret',
 * })
 * await queue.enqueue({ type: 'track', userId: 'u1', event: 'Paid' }, { destination: 'acme' })
 * ```
 */
export class WebhookDestinations {
  readonly #registry: Registry
  readonly #store: () => Promise<RegistryStore>
  readonly #keys: string
  readonly #changed: (id: string) => void

  /**
   * @internal Made by `WebhookQueue`; `changed` is told each id this process writes; `keys` are
   * the queue's, `<prefix>:<name>`: where what workers keep for replay is.
   */
  constructor(registry: Registry, store: () => Promise<RegistryStore>, changed: (id: string) => void, keys: string) {
    this.#keys = keys
    this.#registry = registry
    this.#store = store
    this.#changed = changed
  }

  /**
   * Adds a destination, or replaces the one with its id, and resolves with it as stored.
   * Events already queued keep their per-URL state: a URL still listed goes on where it was, a
   * URL added starts within the event's retry window, a URL removed is not sent to again.
   *
   * @throws `OptionsError` naming the field it cannot use (nothing is written);
   *   {@link DestinationConflictError} when `ifVersion` does not match.
   */
  async set(destination: Destination, options: SetDestinationOptions = {}): Promise<StoredDestination> {
    const { record } = resolveNewDestination(destination)
    const ifVersion = ifVersionOf(options)
    const outcome = await this.#registry.write(await this.#store(), record.id, JSON.stringify(record), ifVersion)
    this.#changed(record.id)
    if (outcome.kind !== 'written')
      throw new DestinationConflictError(record.id, ifVersion ?? 0, outcome.kind === 'conflict' ? outcome.version : 0)
    return { ...record, version: outcome.version, updatedAt: outcome.at }
  }

  /**
   * The destination with this id as stored, or `undefined`.
   *
   * @throws `OptionsError` for an id no destination can have, or for a stored destination that
   *   does not read as one (written by something else with Redis access), naming what is wrong.
   */
  async get(id: string): Promise<StoredDestination | undefined> {
    checkDestinationId(id)
    const read = readStored(id, await this.#registry.read(await this.#store(), id))
    if (read.kind === 'absent') return undefined
    if (read.kind === 'unreadable')
      throw new OptionsError(
        'destination',
        `destination ${JSON.stringify(id)} in Redis cannot be read: ${read.problem}. Set it again with set().`,
      )
    return read.stored
  }

  /**
   * Every destination, by id. One that does not read as a destination is listed in `unreadable`
   * with why, instead of failing the whole list.
   */
  async list(): Promise<{ destinations: StoredDestination[]; unreadable: Array<{ id: string; problem: string }> }> {
    const destinations: StoredDestination[] = []
    const unreadable: Array<{ id: string; problem: string }> = []
    for (const [id, json] of await this.#registry.readAll(await this.#store())) {
      const read = readStored(id, json)
      if (read.kind === 'found') destinations.push(read.stored)
      else if (read.kind === 'unreadable') unreadable.push({ id, problem: read.problem })
    }
    destinations.sort(byId)
    return { destinations, unreadable }
  }

  /**
   * Stops a destination: it takes no new events (`enqueue()` answers `'disabled'`) and its queued
   * events become dead letters (`ERR_DESTINATION_DISABLED`) as workers reach them.
   *
   * @returns the destination as stored, or `undefined` when there is none.
   */
  disable(id: string): Promise<StoredDestination | undefined> {
    return this.#switch(id, false)
  }

  /** Lets a disabled destination take and send events again. @returns it as stored, or `undefined` when there is none. */
  enable(id: string): Promise<StoredDestination | undefined> {
    return this.#switch(id, true)
  }

  /**
   * Removes a destination. Its queued events become dead letters (`ERR_UNKNOWN_DESTINATION`) as
   * workers reach them; `enqueue()` refuses new ones.
   *
   * @returns whether there was one.
   */
  async delete(id: string): Promise<boolean> {
    checkDestinationId(id)
    const store = await this.#store()
    const outcome = await this.#registry.write(store, id, undefined)
    // What workers kept of its events for replay goes with it: an id set again later may be
    // another customer's, and must not be sent this one's events.
    if (outcome.kind === 'written') await store.del(destinationKey(this.#keys, 'sent', id))
    this.#changed(id)
    return outcome.kind === 'written'
  }

  /**
   * Whether a destination with this id was in the registry and was deleted, and not set again
   * since. What seeds the registry from a file (`eventwire serve --config`) asks it, so that a
   * destination deleted on purpose does not come back at the next start.
   *
   * @example
   * ```ts
   * import { WebhookQueue } from 'eventwire/webhook/bullmq'
   *
   * const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: 6379 } })
   * await queue.destinations.delete('acme')
   * console.log(await queue.destinations.wasDeleted('acme')) // true, until set() writes it again
   * ```
   * @throws `OptionsError` for an id no destination can have.
   */
  async wasDeleted(id: string): Promise<boolean> {
    checkDestinationId(id)
    return this.#registry.wasDeleted(await this.#store(), id)
  }

  async #switch(id: string, enabled: boolean): Promise<StoredDestination | undefined> {
    for (let tries = 0; ; tries++) {
      const stored = await this.get(id)
      if (stored === undefined) return undefined
      if (stored.enabled === enabled) return stored
      const { version: _version, updatedAt: _updatedAt, ...settings } = stored
      try {
        return await this.set({ ...settings, enabled }, { ifVersion: stored.version })
      } catch (error) {
        if (!(error instanceof DestinationConflictError) || tries + 1 >= MAX_TRIES) throw error
      }
    }
  }
}
