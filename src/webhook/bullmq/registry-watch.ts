import { monotonicNow } from '../../core/clock.js'
import { setUnrefTimeout } from '../../core/timers.js'

/** How often a process asks a registry what changed (ms). */
export const REGISTRY_POLL_MS = 250
/**
 * The bound on how old a process's view of a registry may be when it is used (ms): a change
 * written this long before reaches every producer, worker and ingest process, without a restart.
 */
export const REGISTRY_FRESH_MS = 1_000

/**
 * When one process looks at a registry's changes: every {@link REGISTRY_POLL_MS} once asked, one
 * look at a time, and at once when its view is older than {@link REGISTRY_FRESH_MS}. What a look
 * does with the changes is its owner's (`look`); a look that fails is told once until one
 * succeeds, as Redis's own errors are reported where they happen too.
 */
export class RegistryWatch {
  /** When the last look that succeeded began, on the monotonic clock. */
  #checkedAt = Number.NEGATIVE_INFINITY
  #checking: Promise<void> | undefined
  #timer: ReturnType<typeof setTimeout> | undefined
  #closed = false
  /** Whether the last look failed (and was told). */
  #failing = false

  constructor(
    private readonly look: () => Promise<void>,
    private readonly failed: (error: Error) => void,
    private readonly now: () => number = monotonicNow,
  ) {}

  /** Resolves once the view is at most {@link REGISTRY_FRESH_MS} old: `undefined`, nothing to wait for, when it is. */
  fresh(): Promise<void> | undefined {
    return this.now() - this.#checkedAt > REGISTRY_FRESH_MS ? this.#check() : undefined
  }

  /** Takes the view as old: the next use waits for a look. For the process that changed the registry, so that it never reads its own change late. */
  expire(): void {
    this.#checkedAt = Number.NEGATIVE_INFINITY
  }

  /** Stops looking. */
  close(): void {
    this.#closed = true
    clearTimeout(this.#timer)
  }

  /** Looks at the registry's changes, once at a time; the next look is scheduled after it. */
  #check(): Promise<void> {
    this.#checking ??= this.#lookNow().finally(() => {
      this.#checking = undefined
      if (!this.#closed) {
        clearTimeout(this.#timer)
        this.#timer = setUnrefTimeout(
          () => void this.#check().catch((error: unknown) => this.#report(error)),
          REGISTRY_POLL_MS,
        )
      }
    })
    return this.#checking
  }

  #report(error: unknown): void {
    if (this.#failing) return
    this.#failing = true
    this.failed(error as Error)
  }

  async #lookNow(): Promise<void> {
    const began = this.now()
    await this.look()
    this.#failing = false
    this.#checkedAt = began
  }
}
