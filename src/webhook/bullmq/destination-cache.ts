import { resolveDestination, type ResolvedDestination, type StoredDestination } from '../delivery/destination-record.js'
import type { Registry, RegistryStore } from './registry.js'
import { RegistryWatch } from './registry-watch.js'
import { readRecord } from './stored-record.js'

/** Most destinations one process keeps read; the one read longest ago goes first. */
export const MAX_CACHED_DESTINATIONS = 10_000

/** A destination as one process reads it: absent, unreadable (with why), or checked. */
export type ReadDestination =
  | { readonly kind: 'absent' }
  | { readonly kind: 'unreadable'; readonly problem: string }
  | { readonly kind: 'found'; readonly stored: StoredDestination; readonly resolved: ResolvedDestination }

/** Parses and checks what the registry holds for destination `id` (see {@link readRecord}). */
export function readStored(id: string, json: string | null): ReadDestination {
  const read = readRecord(
    id,
    json,
    (settings) => resolveDestination(settings, `destinations.${id}.`),
    ({ resolved }) => resolved.id,
  )
  if (read.kind !== 'found') return read
  const { checked, version, updatedAt } = read
  return { kind: 'found', stored: { ...checked.record, version, updatedAt }, resolved: checked.resolved }
}

/**
 * One process's view of the registry: each destination read once when first used, and read again
 * once the registry says it changed. It asks what changed every `REGISTRY_POLL_MS`, and a
 * destination is never used on a view older than `REGISTRY_FRESH_MS`: `get()` waits for a
 * fresh one first. What a destination becomes for this process (`build`) is made once per read.
 */
export class DestinationCache<Value> {
  readonly #registry: Registry
  readonly #store: () => Promise<RegistryStore>
  readonly #build: (read: ReadDestination) => Value
  readonly #watch: RegistryWatch
  readonly #values = new Map<string, Value>()
  readonly #reading = new Map<string, Promise<Value>>()
  /** The registry's counter as of the last look at its changes; `undefined` before the first. */
  #seen: number | undefined

  constructor(options: {
    registry: Registry
    store: () => Promise<RegistryStore>
    build: (read: ReadDestination) => Value
    failed: (error: Error) => void
    now?: () => number
  }) {
    this.#registry = options.registry
    this.#store = options.store
    this.#build = options.build
    this.#watch = new RegistryWatch(() => this.#look(), options.failed, options.now)
  }

  /** What `id` is for this process, on a view of the registry at most `REGISTRY_FRESH_MS` old. */
  async get(id: string): Promise<Value> {
    const looking = this.#watch.fresh()
    if (looking !== undefined) await looking
    const value = this.#values.get(id)
    if (value !== undefined) return value
    let reading = this.#reading.get(id)
    if (reading === undefined) {
      reading = this.#read(id)
      this.#reading.set(id, reading)
    }
    return reading
  }

  /** Forgets `id` at once: for the process that changed it, so that it never reads its own change late. */
  forget(id: string): void {
    this.#values.delete(id)
  }

  /**
   * What `id` is for this process, read from the registry now: for a decision that cannot be
   * undone (a dead letter), which must not rest on a view up to a second old.
   */
  reread(id: string): Promise<Value> {
    this.#values.delete(id)
    return this.#reading.get(id) ?? this.#read(id)
  }

  /** Stops asking the registry. */
  close(): void {
    this.#watch.close()
  }

  async #read(id: string): Promise<Value> {
    const seen = this.#seen
    try {
      const json = await this.#registry.read(await this.#store(), id)
      const value = this.#build(readStored(id, json))
      // A change that landed while it was read is known once the next look sees it; until then,
      // only a read begun after the last look may be kept.
      if (this.#seen === seen) this.#keep(id, value)
      return value
    } finally {
      this.#reading.delete(id)
    }
  }

  #keep(id: string, value: Value): void {
    if (this.#values.size >= MAX_CACHED_DESTINATIONS) {
      const oldest = this.#values.keys().next().value as string
      this.#values.delete(oldest)
    }
    this.#values.set(id, value)
  }

  async #look(): Promise<void> {
    const changes = await this.#registry.changesSince(await this.#store(), this.#seen ?? 0)
    // The first look asks for every change since 0: each id ever written, so nothing read before it stays.
    if (changes.forgetAll) this.#values.clear()
    else for (const id of changes.ids) this.#values.delete(id)
    this.#seen = changes.version
  }
}
