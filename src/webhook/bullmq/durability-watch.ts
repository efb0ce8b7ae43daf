import type { OptionsError } from '../../core/errors/options-error.js'
import { masterKeyOf, nodeHolding, slotOfPrefix } from './cluster-slot.js'
import { judgeDurability, readPersistence, type Durability, type RedisInspector } from './durability.js'

/**
 * How often Redis is checked again (ms): `whileRefusedMs` until a refused Redis is found fit;
 * `everyMs` while it is fit, so that a setting changed with CONFIG SET (no reconnect) is caught
 * within it. One check is one `CONFIG GET` of three settings (else `INFO`): a few round trips a
 * minute. Not an option; tests set it lower here (an internal seam, not exported by the package).
 */
export const watchTiming = { whileRefusedMs: 1_000, everyMs: 60_000 }

/** What a {@link DurabilityWatch} tells its owner. */
export interface DurabilityHooks {
  /** Under `best-effort`: a setting that may lose events, each named once per watch. */
  warn(message: string): void
  /** Under `strict`, after a reconnect or a periodic check: Redis now falls short. Stop storing or taking jobs. */
  refused(refusal: OptionsError): void
  /** After a refusal, a check found Redis fit again. */
  accepted(): void
}

/** An ioredis client or cluster, as far as its events go. */
interface Connection {
  /** ioredis's state: `'ready'` while connected, `'end'` once closed for good. */
  readonly status?: string
  on(event: 'ready' | 'refresh', listener: () => void): unknown
}

/**
 * Checks Redis's persistence against `durability` at start, again on every reconnect, and once
 * every {@link watchTiming}`.everyMs` (a minute) while connected: a Redis restarted with the
 * append-only file off, or with an evicting `maxmemory-policy`, is caught when the connection
 * comes back, and one changed with CONFIG SET within the minute, not at the next deploy. While it
 * refuses, it checks again every second, so a fix takes effect without a reconnect. ioredis emits
 * `'ready'` on each (re)connection; on a cluster, the master holding the queue's slot is the Redis
 * checked, again when another master takes the slot over (a failover), as the cluster's
 * `'refresh'` shows. {@link DurabilityWatch.stop} ends the checks; so does a connection closed
 * for good (`status` `'end'`).
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
  /** The next periodic check while fit. */
  #periodic: ReturnType<typeof setTimeout> | undefined
  #stopped = false

  constructor(durability: Durability, who: string, prefix: string, hooks: DurabilityHooks) {
    this.#durability = durability
    this.#who = who
    this.#hooks = hooks
    this.#slot = slotOfPrefix(prefix)
  }

  /**
   * Checks now and, once it passes, on every reconnect of `connection` and every `everyMs`.
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
    this.#watchLater(connection)
  }

  /** Ends the checks (the owner closed): no timer is left, and reconnects check nothing. */
  stop(): void {
    this.#stopped = true
    clearTimeout(this.#retry)
    clearTimeout(this.#periodic)
    this.#retry = undefined
    this.#periodic = undefined
  }

  #again(connection: unknown): void {
    if (this.#stopped) return
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
   * While refused, checks again every `whileRefusedMs`: a setting fixed with CONFIG SET brings
   * no reconnect, and a cluster's connection reads its slots again only when a command fails.
   */
  #retryLater(connection: unknown): void {
    if (this.#retry !== undefined || this.#stopped) return
    this.#retry = unrefd(
      setTimeout(() => {
        this.#retry = undefined
        // Closed for good (close(), quit): nothing to check any more.
        if (statusOf(connection) !== 'end') this.#again(connection)
      }, watchTiming.whileRefusedMs),
    )
  }

  /**
   * Checks again every `everyMs` while connected, with the same verdicts and hooks as a reconnect:
   * CONFIG SET appendonly no, or an evicting policy, brings no reconnect. A disconnected Redis is
   * left to its next `'ready'`; a refused one to {@link DurabilityWatch.#retryLater}.
   */
  #watchLater(connection: unknown): void {
    if (this.#periodic !== undefined || this.#stopped) return
    this.#periodic = unrefd(
      setTimeout(() => {
        this.#periodic = undefined
        const status = statusOf(connection)
        if (status === 'end') return
        if (status === 'ready' && this.#refusal === undefined) this.#again(connection)
        this.#watchLater(connection)
      }, watchTiming.everyMs),
    )
  }
}

function statusOf(connection: unknown): string | undefined {
  return (connection as Connection).status
}

/** `timer`, made not to keep the process alive: a check waiting for its turn is no reason to run. */
function unrefd(timer: ReturnType<typeof setTimeout>): ReturnType<typeof setTimeout> {
  ;(timer as { unref?: () => void }).unref?.()
  return timer
}
