/** A listener of an event whose arguments are `Args`. */
export type Listener<Args extends unknown[]> = (...args: Args) => void

/**
 * A small typed event emitter that runs everywhere (no `node:events`). A listener that throws (or,
 * async, rejects) does not stop the others, nor the work that emitted; the error goes to
 * `onListenerError`.
 */
export class Emitter<Events extends { [Name in keyof Events]: unknown[] }> {
  readonly #listeners = new Map<keyof Events, Set<Listener<never>>>()

  /** Calls `listener` each time `event` is emitted. */
  on<Name extends keyof Events>(event: Name, listener: Listener<Events[Name]>): this {
    let set = this.#listeners.get(event)
    if (!set) {
      set = new Set()
      this.#listeners.set(event, set)
    }
    set.add(listener as Listener<never>)
    return this
  }

  /** Calls `listener` the next time `event` is emitted, then forgets it. */
  once<Name extends keyof Events>(event: Name, listener: Listener<Events[Name]>): this {
    const wrapper: Listener<Events[Name]> = (...args) => {
      this.off(event, wrapper)
      listener(...args)
    }
    return this.on(event, wrapper)
  }

  /** Removes a listener added with `on`. */
  off<Name extends keyof Events>(event: Name, listener: Listener<Events[Name]>): this {
    this.#listeners.get(event)?.delete(listener as Listener<never>)
    return this
  }

  /** How many listeners `event` has. */
  listenerCount(event: keyof Events): number {
    return this.#listeners.get(event)?.size ?? 0
  }

  /** Calls the listeners of `event` in order; returns whether there were any. */
  protected emit<Name extends keyof Events>(event: Name, ...args: Events[Name]): boolean {
    const set = this.#listeners.get(event)
    if (!set || set.size === 0) return false
    for (const listener of [...set]) {
      try {
        // Typed to return void, but an async listener returns a promise: its rejection is reported too.
        const returned: unknown = (listener as Listener<Events[Name]>)(...args)
        if (returned instanceof Promise) returned.catch((error: unknown) => this.#report(error))
      } catch (error) {
        this.#report(error)
      }
    }
    return true
  }

  /** Hands a listener's error to `onListenerError`; a logger that throws in turn is not allowed to break the emitting work. */
  #report(error: unknown): void {
    try {
      this.onListenerError(error)
    } catch {
      // Nowhere left to report it.
    }
  }

  /** Where errors thrown by listeners go: the console, unless a subclass has a logger. */
  protected onListenerError(error: unknown): void {
    console.error('eventwire: an event listener threw', error)
  }
}
