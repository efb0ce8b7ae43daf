import type { OptionsError } from '../../core/errors/options-error.js'
import { masterKeyOf, nodeHolding, slotOfPrefix } from './cluster-slot.js'
import { judgeDurability, readPersistence, type Durability, type RedisInspector } from './durability.js'

/** How often a refused Redis is checked again (ms), until it is found fit. */
export const RECHECK_MS = 1_000

/** What a {@link DurabilityWatch} tells its owner. */
export interface DurabilityHooks {
  /** Under `best-effort`: a setting that may lose events, each named once per watch. */
  warn(message: string): void
  /** Under `strict`, after a reconnect: Redis now falls short. Stop storing or taking jobs. */
  refused(refusal: OptionsError): void
  /** After a refusal, a check found Redis fit again. */
  accepted(): void
}

/** An ioredis client or cluster, as far as its events go. */
interface Connection {
  on(event: 'ready' | 'refresh', listener: () => void): unknown
}

/**
 * Checks Redis's persistence against `durability` at start, and again on every reconnect: a
 * Redis restarted with the append-only file off, or with an evicting `maxmemory-policy`, is
 * caught when the connection comes back, not at the next deploy. While it refuses, it checks
 * again every second, so a fix takes effect without a reconnect. ioredis emits `'ready'` on
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
  /** The next check while refused. */
  #retry: ReturnType<typeof setTimeout> | undefined

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
    const events = connection as Connection
    events.on('ready', () => this.#again(connection))
    // A cluster's slots were read again: a failover may have handed the queue's slot to another master.
    events.on('refresh', () => {
      if (masterKeyOf(connection, this.#slot) !== this.#checkedMaster) this.#again(connection)
    })
  }

  #again(connection: unknown): void {
    this.#current = this.#current.then(() => this.#recheck(connection))
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
    if (this.#refusal) this.#retryLater(connection)
  }

  /**
   * While refused, checks again every {@link RECHECK_MS}: a setting fixed with CONFIG SET brings
   * no reconnect, and a cluster's connection reads its slots again only when a command fails.
   */
  #retryLater(connection: unknown): void {
    if (this.#retry !== undefined) return
    this.#retry = setTimeout(() => {
      this.#retry = undefined
      // Closed for good (close(), quit): nothing to check any more.
      if ((connection as { status?: unknown }).status !== 'end') this.#again(connection)
    }, RECHECK_MS)
    // A check waiting for its turn does not keep the process alive.
    ;(this.#retry as { unref?: () => void }).unref?.()
  }
}
