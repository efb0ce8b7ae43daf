import { setUnrefTimeout } from './timers.js'

/**
 * Most response-body bytes read from a receiver. Only the status and `Retry-After` count; the body
 * is read (up to this) so the connection can be reused, and a longer one closes the connection.
 */
export const RESPONSE_BODY_CAP = 64 * 1024

/** What aborts an attempt: an `AbortController`, or a lighter stand-in with the same two members. */
export interface Aborter<Signal> {
  readonly signal: Signal
  abort(reason: unknown): void
}

/** One attempt's deadline: connecting, the response headers and reading the body, all together. */
export interface AttemptDeadline<Signal = AbortSignal> {
  /** Aborts the request, or the reading of its body, at the deadline. */
  readonly signal: Signal
  /** Whether the deadline passed. */
  readonly expired: () => boolean
  /** Stops the timer: the attempt is over. */
  readonly end: () => void
  /** Aborts now: the transport is closing. */
  readonly cancel: () => void
}

/**
 * Starts the deadline of an attempt that may take `timeoutMs`; its timer does not keep the process
 * alive. `controller` aborts the attempt when the deadline passes (an `AbortController` unless
 * the transport brings a lighter one, see {@link AttemptAborter}).
 */
export function startDeadline(timeoutMs: number): AttemptDeadline
export function startDeadline<Signal>(timeoutMs: number, controller: Aborter<Signal>): AttemptDeadline<Signal>
export function startDeadline(
  timeoutMs: number,
  controller: Aborter<unknown> = new AbortController(),
): AttemptDeadline<unknown> {
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
  readonly #active: Array<{ deadline: AttemptDeadline<unknown>; index: number }> = []

  /** Reads a body in the background with `drain`, which settles when `deadline` aborts at the latest. */
  start(deadline: AttemptDeadline<unknown>, drain: () => Promise<unknown>): void {
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

/**
 * The part of an `AbortSignal` that undici's `request()` and `body.dump()` use (`aborted`,
 * `reason`, `abort` listeners), as its own controller: what the webhook engine's undici transport
 * aborts an attempt with. Node's `AbortController` builds a full `EventTarget` per attempt, a
 * measurable share of a webhook request's CPU; this is a few fields. Not a general `AbortSignal`:
 * Node-only code hands it to undici and nothing else. (The client's undici transport keeps an
 * `AbortController`: it sends one request per batch, not per event.)
 */
export class AttemptAborter implements Aborter<AttemptAborter> {
  aborted = false
  reason: unknown
  #listeners: Array<() => void> = []

  get signal(): AttemptAborter {
    return this
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    this.#listeners.push(listener)
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    this.#listeners = this.#listeners.filter((known) => known !== listener)
  }

  abort(reason: unknown): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = reason
    for (const listener of this.#listeners.splice(0)) listener()
  }
}
