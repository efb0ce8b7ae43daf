import { transportClosed } from './attempt-deadline.js'

/** An attempt answered whose body is still being read, as {@link BodyDrains} holds it. */
export interface Draining {
  /** Its place among the drains; none, or -1, while it has none. */
  drainIndex?: number | undefined
  /** Ends the attempt now, its body with it. */
  cancel(reason: Error): void
  /** The attempt is over: its deadline stops. */
  end(): void
}

/**
 * The attempts answered whose response bodies are still being read, so that closing a transport
 * can cut them short instead of waiting for their deadlines.
 */
export class BodyDrains<Attempt extends Draining> {
  /**
   * The attempts still reading, each at its `drainIndex`: removal swaps the last one in, so
   * hundreds of attempts a second add and remove without the rehashing (and garbage) a `Set` would cost.
   */
  readonly #active: Attempt[] = []

  /** Holds `attempt` while its body is read. */
  add(attempt: Attempt): void {
    attempt.drainIndex = this.#active.push(attempt) - 1
  }

  /** Lets `attempt` go: its body was read, or given up. */
  remove(attempt: Attempt): void {
    const index = attempt.drainIndex ?? -1
    if (index < 0 || this.#active[index] !== attempt) return
    attempt.drainIndex = -1
    const last = this.#active.pop() as Attempt
    if (last === attempt) return
    this.#active[index] = last
    last.drainIndex = index
  }

  /** Reads a body in the background with `drain`, which settles when `attempt` is cut short at the latest; then ends it. */
  start(attempt: Attempt, drain: () => Promise<unknown>): void {
    this.add(attempt)
    const done = () => {
      attempt.end()
      this.remove(attempt)
    }
    // A body that fails to arrive changes nothing: the answer was in before it.
    drain().then(done, done)
  }

  /** Cuts every body still being read. */
  cancelAll(): void {
    for (const attempt of this.#active.splice(0)) {
      attempt.drainIndex = -1
      attempt.cancel(transportClosed())
    }
  }
}
