import { setUnrefTimeout } from './timers.js'

/** One attempt's deadline: connecting, the response headers and reading the body, all together. */
export interface AttemptDeadline {
  /** Aborts the request, or the reading of its body, at the deadline. */
  readonly signal: AbortSignal
  /** Whether the deadline passed. */
  readonly expired: () => boolean
  /** Stops the timer: the attempt is over. */
  readonly end: () => void
  /** Aborts now: the transport is closing. */
  readonly cancel: () => void
}

/**
 * Starts the deadline of an attempt that may take `timeoutMs`; its timer does not keep the process
 * alive.
 */
export function startDeadline(timeoutMs: number): AttemptDeadline {
  const controller = new AbortController()
  let expired = false
  const timer = setUnrefTimeout(() => {
    expired = true
    controller.abort(new DOMException(`no complete answer within ${timeoutMs} ms`, 'TimeoutError'))
  }, timeoutMs)
  const end = () => clearTimeout(timer)
  return {
    signal: controller.signal,
    expired: () => expired,
    end,
    cancel: () => {
      end()
      controller.abort(new DOMException('the transport was closed', 'AbortError'))
    },
  }
}

/**
 * The response bodies still being read after their attempts ended, so that closing a transport can
 * cut them short instead of waiting for their deadlines.
 */
export class BodyDrains {
  /**
   * The drains still running, each at its index: removal swaps the last one in, so hundreds of
   * attempts a second add and remove without the rehashing (and garbage) a `Set` would cost.
   */
  readonly #active: Array<{ deadline: AttemptDeadline; index: number }> = []

  /** Reads a body in the background with `drain`, which settles when `deadline` aborts at the latest. */
  start(deadline: AttemptDeadline, drain: () => Promise<unknown>): void {
    const entry = { deadline, index: this.#active.length }
    this.#active.push(entry)
    const done = () => {
      deadline.end()
      if (this.#active[entry.index] !== entry) return
      const last = this.#active.pop()
      if (last !== undefined && last !== entry) {
        this.#active[entry.index] = last
        last.index = entry.index
      }
    }
    // A body that fails to arrive changes nothing: the answer was in before it.
    drain().then(done, done)
  }

  /** Cuts every body still being read. */
  cancelAll(): void {
    for (const { deadline } of this.#active.splice(0)) deadline.cancel()
  }
}
