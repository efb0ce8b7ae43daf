import { setUnrefTimeout } from './timers.js'

/** What a cut-short attempt ends with: a `DOMException` named for why (`TimeoutError`, `AbortError`). */
export const cutShort = (message: string, name: string): Error => new DOMException(message, name) as Error

/** What an attempt cut short by the closing of its transport ends with. */
export const transportClosed = (): Error => cutShort('the transport was closed', 'AbortError')

/**
 * One attempt's deadline, the one rule every transport's attempts follow: one timer over all of it
 * (waiting for a connection, connecting, the response's head and its body), and the caller's abort
 * signal, which ends it as the deadline does. Each kind of attempt ends itself its own way, in
 * {@link AttemptDeadline.cancel}: no `AbortController` per attempt, unless what it sends with takes
 * a signal ({@link startDeadline}). The timer does not keep the process alive.
 */
export abstract class AttemptDeadline {
  readonly #timer: ReturnType<typeof setTimeout>
  readonly #signal: AbortSignal | undefined
  #expired = false

  constructor(timeoutMs: number, signal: AbortSignal | undefined) {
    this.#timer = setUnrefTimeout(() => {
      this.#expired = true
      this.cancel(cutShort(`no complete answer within ${timeoutMs} ms`, 'TimeoutError'))
    }, timeoutMs)
    this.#signal = signal
    signal?.addEventListener('abort', this.#aborted, { once: true })
  }

  readonly #aborted = (): void => this.unwanted()

  /** Ends the attempt now: at its deadline, when its signal aborts, or when its transport closes. */
  abstract cancel(reason: Error): void

  /** The signal aborted: no longer wanted (another URL accepted the event), the attempt ends now, freeing its connection. */
  protected unwanted(): void {
    this.cancel(cutShort('the attempt is no longer wanted', 'AbortError'))
  }

  /** Whether the deadline passed. */
  expired(): boolean {
    return this.#expired
  }

  /** The signal no longer ends the attempt: what is left of it (a body read after the answer) ends at the deadline, or cancelled. */
  stopListening(): void {
    this.#signal?.removeEventListener('abort', this.#aborted)
  }

  /** Stops the timer and lets the signal go: the attempt is over. */
  end(): void {
    clearTimeout(this.#timer)
    this.stopListening()
  }
}

/** A deadline for what sends with an abort signal (`fetch`, undici's `Pool.request`): {@link startDeadline}. */
export class SignalDeadline extends AttemptDeadline {
  readonly #controller = new AbortController()
  /** Aborts the request, or the reading of its body, at the deadline. */
  readonly signal = this.#controller.signal
  /** Where `BodyDrains` holds it while its body is read after the answer. */
  drainIndex = -1

  /** Aborts now: at the deadline, or because the transport is closing. */
  cancel(reason: Error = transportClosed()): void {
    this.end()
    this.#controller.abort(reason)
  }

  /** The caller's signal (close()'s deadline, or an attempt no longer wanted) closes it as the transport's closing does. */
  protected override unwanted(): void {
    this.cancel()
  }
}

/**
 * Starts the deadline of an attempt that may take `timeoutMs`, with an abort signal to send with;
 * `signal` (the caller's) ends it early.
 */
export function startDeadline(timeoutMs: number, signal?: AbortSignal | undefined): SignalDeadline {
  return new SignalDeadline(timeoutMs, signal)
}
