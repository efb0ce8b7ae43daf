import { ClosedError } from '../../core/errors/closed-error.js'
import { OptionsError } from '../../core/errors/options-error.js'
import { byId, checkDestinationId, ifVersionOf } from '../delivery/destination-record.js'
import { SourceConflictError } from './source-conflict-error.js'
import { SourceDirectory } from './source-directory.js'
import { readStoredSource, resolveSource, type Source, type StoredSource } from './source-record.js'
import { Registry, type RegistryStore } from './registry.js'
import type { SetDestinationOptions } from './webhook-destinations.js'

/** What {@link WebhookSources} needs of its queue. */
interface SourcesParts {
  /** The queue's keys, `<prefix>:<name>`. */
  readonly keys: string
  readonly store: () => Promise<RegistryStore>
  /** Bounds a read by the queue's `enqueueTimeout`: a typed error once Redis does not answer. */
  readonly bounded: <T>(work: Promise<T>) => Promise<T>
  /** Told of a look at the registry that failed, once until one succeeds. */
  readonly failed: (error: Error) => void
  /** Told of a stored source that does not read as one. */
  readonly unreadable: (id: string, problem: string) => void
}

/**
 * The registry of sources, in the queue's Redis: whose write keys `eventwire serve` takes, and
 * which destinations each source's events go to. One truth for every ingest process: a change
 * reaches each within a second, without a restart. Reached as `WebhookQueue.sources`.
 *
 * Write keys are kept only as SHA-256 digests: whoever reads the registry cannot send as a source.
 *
 * @example
 * ```ts
 * import { WebhookQueue } from 'eventwire/webhook/bullmq'
 *
 * const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: 6379 } })
 * await queue.destinations.set({ id: 'acme', webhooks: [{ url: 'https://hooks.acme.example/in' }] })
 * await queue.sources.set({ id: 'shop', writeKey: 'wk_live_6f1c9a', destinations: ['acme'] })
 * const source = await queue.sources.find('wk_live_6f1c9a') // { id: 'shop', destinations: ['acme'], ... }
 * ```
 */
export class WebhookSources {
  readonly #registry: Registry
  readonly #store: () => Promise<RegistryStore>
  readonly #destinations: Registry
  readonly #parts: SourcesParts
  #directory: SourceDirectory | undefined
  #closed = false

  /** @internal Made by `WebhookQueue`. */
  constructor(parts: SourcesParts) {
    this.#registry = new Registry(parts.keys, 'sources', 'writeKeyDigests')
    this.#destinations = new Registry(parts.keys, 'destinations')
    this.#store = parts.store
    this.#parts = parts
  }

  /**
   * Checks a source as `set()` does, without Redis: for a file of sources checked whole before
   * any is written.
   *
   * @throws `OptionsError` naming the first field it cannot use (`source.writeKey`) and what to give.
   */
  static check(source: Source): void {
    resolveSource(source)
  }

  /**
   * Adds a source, or replaces the one with its id, and resolves with it as stored. Each of its
   * destinations must be in the registry of destinations.
   *
   * @throws `OptionsError` naming the field it cannot use, a destination the registry lacks, or a
   *   write key another source has (nothing is written); {@link SourceConflictError} when
   *   `ifVersion` does not match.
   */
  async set(source: Source, options: SetDestinationOptions = {}): Promise<StoredSource> {
    const record = resolveSource(source)
    const ifVersion = ifVersionOf(options)
    const store = await this.#store()
    const found = await this.#destinations.readMany(store, record.destinations)
    const missing = found.indexOf(null)
    if (missing !== -1)
      throw new OptionsError(
        `source.destinations[${missing}]`,
        `no destination ${JSON.stringify(record.destinations[missing])} in the registry: set it first (destinations.set(), or eventwire destinations set).`,
      )
    const outcome = await this.#registry.write(store, record.id, JSON.stringify(record), ifVersion)
    this.#directory?.expire()
    if (outcome.kind === 'taken')
      throw new OptionsError(
        'source.writeKey',
        `source ${JSON.stringify(outcome.by)} has this write key already: give each source its own.`,
      )
    if (outcome.kind !== 'written')
      throw new SourceConflictError(record.id, ifVersion ?? 0, outcome.kind === 'conflict' ? outcome.version : 0)
    return { ...record, version: outcome.version, updatedAt: outcome.at }
  }

  /**
   * The source with this id as stored, or `undefined`.
   *
   * @throws `OptionsError` for an id no source can have, or for a stored source that does not
   *   read as one (written by something else with Redis access), naming what is wrong.
   */
  async get(id: string): Promise<StoredSource | undefined> {
    checkDestinationId(id, 'source')
    const read = readStoredSource(id, await this.#registry.read(await this.#store(), id))
    if (read.kind === 'absent') return undefined
    if (read.kind === 'unreadable')
      throw new OptionsError(
        'source',
        `source ${JSON.stringify(id)} in Redis cannot be read: ${read.problem.replace(/\.$/, '')}. Set it again with set().`,
      )
    return read.stored
  }

  /** Every source, by id; one that does not read as a source is listed in `unreadable` with why. */
  async list(): Promise<{ sources: StoredSource[]; unreadable: Array<{ id: string; problem: string }> }> {
    const sources: StoredSource[] = []
    const unreadable: Array<{ id: string; problem: string }> = []
    for (const [id, json] of await this.#registry.readAll(await this.#store())) {
      const read = readStoredSource(id, json)
      if (read.kind === 'found') sources.push(read.stored)
      else if (read.kind === 'unreadable') unreadable.push({ id, problem: read.problem })
    }
    sources.sort(byId)
    return { sources, unreadable }
  }

  /** Removes a source: its write keys are refused from then on. @returns whether there was one. */
  async delete(id: string): Promise<boolean> {
    checkDestinationId(id, 'source')
    const outcome = await this.#registry.write(await this.#store(), id, undefined)
    this.#directory?.expire()
    return outcome.kind === 'written'
  }

  /**
   * Whether a source with this id was in the registry and was deleted, and not set again since.
   * What seeds the registry from a file (`eventwire serve --config`) asks it, so that a source
   * deleted on purpose (a leaked write key) does not come back at the next start.
   *
   * @example
   * ```ts
   * import { WebhookQueue } from 'eventwire/webhook/bullmq'
   *
   * const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: 6379 } })
   * await queue.sources.delete('shop')
   * console.log(await queue.sources.wasDeleted('shop')) // true, until set() writes it again
   * ```
   * @throws `OptionsError` for an id no source can have.
   */
  async wasDeleted(id: string): Promise<boolean> {
    checkDestinationId(id, 'source')
    return this.#registry.wasDeleted(await this.#store(), id)
  }

  /**
   * The source whose write key this is, or `undefined`, on a view of the registry at most a
   * second old. The first call reads every source into this process, which then follows the
   * registry's changes: what an ingest process asks for each request. It answers at once from
   * what this process holds, and with a promise only while that is older than a second (the
   * first call, or while Redis does not answer).
   *
   * @throws `ClosedError` after the queue's `close()`; the promise rejects with
   *   `RedisTimeoutError` when Redis does not answer within the queue's `enqueueTimeout`.
   */
  find(writeKey: string): StoredSource | undefined | Promise<StoredSource | undefined> {
    if (this.#closed) throw new ClosedError('find sources')
    this.#directory ??= new SourceDirectory({
      registry: this.#registry,
      store: this.#store,
      failed: this.#parts.failed,
      unreadable: this.#parts.unreadable,
    })
    const found = this.#directory.find(writeKey)
    return found instanceof Promise ? this.#parts.bounded(found) : found
  }

  /** @internal Stops following the registry: `WebhookQueue.close()` calls it. */
  close(): void {
    this.#closed = true
    this.#directory?.close()
  }
}
