import type { Registry, RegistryStore } from './registry.js'
import { RegistryWatch } from './registry-watch.js'
import { readStoredSource, writeKeyDigest, type StoredSource } from './source-record.js'

/**
 * Every source of the registry, held by one process and found by write key: what an ingest
 * process asks for each request. Held whole, not read on demand, so that a request with a key no
 * source has costs Redis nothing: a flood of wrong keys reaches no further than this map. A few
 * hundred bytes per source. Looked up by the key's digest, so the lookup takes the same time
 * whatever the key.
 *
 * It reads what changed every `REGISTRY_POLL_MS`, and answers on a view at most
 * `REGISTRY_FRESH_MS` old: `find()` waits for a fresh one first.
 */
export class SourceDirectory {
  readonly #registry: Registry
  readonly #store: () => Promise<RegistryStore>
  readonly #unreadable: (id: string, problem: string) => void
  readonly #watch: RegistryWatch
  readonly #byId = new Map<string, StoredSource>()
  readonly #byDigest = new Map<string, StoredSource>()
  /** The registry's counter as of the last look; `undefined` before the first. */
  #seen: number | undefined

  constructor(options: {
    registry: Registry
    store: () => Promise<RegistryStore>
    /** Told of a look that failed, once until one succeeds. */
    failed: (error: Error) => void
    /** Told of a stored source that does not read as one (left out), each time it is read. */
    unreadable: (id: string, problem: string) => void
    now?: () => number
  }) {
    this.#registry = options.registry
    this.#store = options.store
    this.#unreadable = options.unreadable
    this.#watch = new RegistryWatch(() => this.#look(), options.failed, options.now)
  }

  /**
   * The source `writeKey` belongs to, or `undefined`; a promise only while the view is older
   * than `REGISTRY_FRESH_MS` (the first call, or after Redis did not answer).
   */
  find(writeKey: string): StoredSource | undefined | Promise<StoredSource | undefined> {
    const digest = writeKeyDigest(writeKey)
    const looking = this.#watch.fresh()
    if (looking === undefined) return this.#byDigest.get(digest)
    return looking.then(() => this.#byDigest.get(digest))
  }

  /** How many sources it holds. */
  get size(): number {
    return this.#byId.size
  }

  /** Reads the registry's changes before the next `find()`: this process changed it. */
  expire(): void {
    this.#watch.expire()
  }

  /** Stops reading the registry. */
  close(): void {
    this.#watch.close()
  }

  async #look(): Promise<void> {
    const store = await this.#store()
    const changes = await this.#registry.changesSince(store, this.#seen ?? 0)
    if (this.#seen === undefined || changes.forgetAll) {
      const all = await this.#registry.readAll(store)
      this.#byId.clear()
      this.#byDigest.clear()
      for (const [id, json] of all) this.#hold(id, json)
    } else {
      const jsons = await this.#registry.readMany(store, changes.ids)
      for (const [index, id] of changes.ids.entries()) {
        this.#drop(id)
        this.#hold(id, jsons[index] ?? null)
      }
    }
    this.#seen = changes.version
  }

  #drop(id: string): void {
    const held = this.#byId.get(id)
    if (held === undefined) return
    this.#byId.delete(id)
    for (const digest of held.writeKeyDigests) if (this.#byDigest.get(digest) === held) this.#byDigest.delete(digest)
  }

  #hold(id: string, json: string | null): void {
    const read = readStoredSource(id, json)
    if (read.kind === 'unreadable') this.#unreadable(id, read.problem)
    if (read.kind !== 'found') return
    this.#byId.set(id, read.stored)
    for (const digest of read.stored.writeKeyDigests) this.#byDigest.set(digest, read.stored)
  }
}
