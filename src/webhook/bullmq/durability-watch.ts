import type { OptionsError } from '../../core/errors/options-error.js'
import { masterKeyOf, nodeHolding, slotOfPrefix } from './cluster-slot.js'
import { judgeDurability, readPersistence, type Durability, type RedisInspector } from './durability.js'

/** What a {@link DurabilityWatch} tells its owner. */
export interface DurabilityHooks {
  /** Under `best-effort`: a setting that may lose events, each named once per watch. */
  warn(message: string): void
  /** Under `strict`, after a reconnect: Redis now falls short. Stop storing or taking jobs. */
  refused(refusal: OptionsError): void
  /** After a refusal, a reconnect found Redis fit again. */
  accepted(): void
}

/** An ioredis client or cluster, as far as its events go. */
interface Connection {
  on(event: 'ready' | 'refresh', listener: () => void): unknown
}

/**
 * Checks Redis's persistence against `durability` at start, and again on every reconnect: a
 * Redis restarted with the append-only file off, or with an evicting `maxmemory-policy`, is
 * caught when the connection comes back, not at the next deploy. ioredis emits `'ready'` on
 * each (re)connection; on a cluster, the master holding the queue's slot is the Redis checked,
 * again when another master takes the slot over (a failover), as the cluster's `'refresh'` shows.
 */
export class DurabilityWatch {
  readonly #durability: Durability
  readonly #who: string
  readonly #hooks: DurabilityHooks
  readonly #slot: number | undefined
  /** Settings a best-effort warning named already. */
  readonly #warned = new Set<string>()
  #refusal: OptionsError | undefined
  /** The check in progress or last done; the next one waits for it. */
  #current: Promise<void> = Promise.resolve()
  /** The cluster master last checked, to notice a new one. */
  #checkedMaster: string | undefined
  #watching = false

  constructor(durability: Durability, who: string, prefix: string, hooks: DurabilityHooks) {
    this.#durability = durability
    this.#who = who
    this.#hooks = hooks
    this.#slot = slotOfPrefix(prefix)
  }

  /**
   * Checks now and, once it passes, on every reconnect of `connection`.
   *
   * @throws the refusal (as a rejection), under `strict`; a start that failed may be tried again.
   */
  async start(connection: unknown): Promise<void> {
    await this.#check(connection)
    if (this.#refusal) throw this.#refusal
    if (this.#watching) return
    this.#watching = true
    const again = () => {
      this.#current = this.#current.then(() => this.#recheck(connection))
    }
    const events = connection as Connection
    events.on('ready', again)
    // A cluster's slots were read again: a failover may have handed the queue's slot to another
    // master. While refused, every refresh checks again: the refusal may come from a master that
    // could not answer in the middle of a failover, and no 'ready' of the cluster would follow.
    events.on('refresh', () => {
      if (this.#refusal !== undefined || masterKeyOf(connection, this.#slot) !== this.#checkedMaster) again()
    })
  }

  /** The refusal while Redis falls short under `strict`, as the latest check found. */
  get refusal(): OptionsError | undefined {
    return this.#refusal
  }

  /**
   * Resolves once the latest check is done, or rejects with its refusal: what may be stored now.
   *
   * @throws the refusal (as a rejection) while Redis falls short under `strict`.
   */
  async verdict(): Promise<void> {
    await this.#current
    if (this.#refusal) throw this.#refusal
  }

  async #check(connection: unknown): Promise<void> {
    const master = masterKeyOf(connection, this.#slot)
    // On a cluster, CONFIG and INFO without a key go to any node: ask the one holding the queue.
    const redis = (nodeHolding(connection, this.#slot) ?? connection) as RedisInspector
    const verdict = judgeDurability(await readPersistence(redis), this.#durability, this.#who, this.#warned)
    this.#checkedMaster = master
    this.#refusal = verdict.refusal
    for (const setting of verdict.warned) this.#warned.add(setting)
    if (verdict.warning !== undefined) this.#hooks.warn(verdict.warning)
  }

  async #recheck(connection: unknown): Promise<void> {
    const before = this.#refusal
    try {
      await this.#check(connection)
    } catch {
      // The connection dropped again before Redis answered: its next 'ready' checks again.
      return
    }
    if (this.#refusal && this.#refusal.message !== before?.message) this.#hooks.refused(this.#refusal)
    else if (!this.#refusal && before) this.#hooks.accepted()
  }
}
