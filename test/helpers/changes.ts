/**
 * Waits on output that arrives bit by bit: whoever reads it calls {@link notify} after each bit,
 * and every waiter checks its condition then, never on a timer of its own.
 */
export class Changes {
  readonly #waiters = new Set<() => void>()

  /** Something a waiter may be waiting for has changed: a line read, output parsed. */
  notify(): void {
    for (const wake of this.#waiters) wake()
  }

  /**
   * Resolves with the first result of `check` that is not `undefined`, checking now and after each
   * change; rejects after `timeoutMs` (a limit, not a wait) with `failure()` as the message.
   */
  until<T>(check: () => T | undefined, timeoutMs: number, failure: () => string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const wake = () => {
        const found = check()
        if (found === undefined) return
        this.#waiters.delete(wake)
        clearTimeout(timer)
        resolve(found)
      }
      const timer = setTimeout(() => {
        this.#waiters.delete(wake)
        reject(new Error(failure()))
      }, timeoutMs)
      this.#waiters.add(wake)
      wake()
    })
  }
}
