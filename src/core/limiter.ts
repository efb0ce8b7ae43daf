import { Queue } from './queue.js'

/** Lets at most `limit` holders in at once; the rest wait in arrival order. */
export class Limiter {
  readonly #limit: number
  readonly #waiting = new Queue<() => void>()
  #active = 0

  constructor(limit: number) {
    this.#limit = limit
  }

  /**
   * Takes a place: `undefined` when one was free (no promise, no tick: the common case), else a
   * promise that resolves when one is handed over.
   */
  acquire(): Promise<void> | undefined {
    if (this.#active < this.#limit) {
      this.#active++
      return undefined
    }
    return new Promise((resolve) => this.#waiting.push(resolve))
  }

  /** Frees a place, handing it straight to the next waiter if there is one. */
  release(): void {
    const next = this.#waiting.shift()
    if (next) next()
    else this.#active--
  }
}
