import { setUnrefTimeout } from './timers.js'

/** What a cut-short attempt ends with: a `DOMException` named for why (`TimeoutError`, `AbortError`). */
export const cutShort = (message: string, name: string): Error => new DOMException(message, name) as Error

/** What an attempt cut short by the closing of its transport ends with. */
export const transportClosed = (): Error => cutShort('the transport was closed', 'AbortError')

/** An attempt's deadline, as {@link armDeadline} starts it. */
export interface Deadline {
  /** Whether the deadline passed. */
  expired(): boolean
  /** The signal no longer ends the attempt: what is left of it (a body read after the answer) ends at the deadline, or cancelled. */
  stopListening(): void
  /** Stops the timer and lets the signal go: the attempt is over. */
  end(): void
}

/**
 * One attempt's deadline, the one rule every transport's attempts follow: one timer over all of it
 * (waiting for a connection, connecting, the response's head and its body), and the caller's abort
 * signal, which ends it as the deadline does. `cancel` ends the attempt, each kind of attempt its
 * own way: with the reason at the deadline, and with none when the signal aborts (the caller no
 * longer wants it). The timer does not keep the process alive. Closures rather than a class: the
 * browser's `Client` carries this, minified.
 */
export function armDeadline(
  timeoutMs: number,
  signal: AbortSignal | undefined,
  cancel: (reason?: Error) => void,
): Deadline {
  let expired = false
  const timer = setUnrefTimeout(() => {
    expired = true
    cancel(cutShort(`no complete answer within ${timeoutMs} ms`, 'TimeoutError'))
  }, timeoutMs)
  const aborted = (): void => cancel()
  signal?.addEventListener('abort', aborted, { once: true })
  const stopListening = (): void => signal?.removeEventListener('abort', aborted)
  return {
    expired: () => expired,
    stopListening,
    end: () => {
      clearTimeout(timer)
      stopListening()
    },
  }
}

/**
 * {@link armDeadline} as a class to extend, for the attempts of the Node transports: each ends
 * itself its own way, in {@link AttemptDeadline.cancel}, with no `AbortController` per attempt.
 */
export abstract class AttemptDeadline implements Deadline {
  readonly #deadline: Deadline

  constructor(timeoutMs: number, signal: AbortSignal | undefined) {
    this.#deadline = armDeadline(timeoutMs, signal, (reason) =>
      reason === undefined ? this.unwanted() : this.cancel(reason),
    )
  }

  /** Ends the attempt now: at its deadline, when its signal aborts, or when its transport closes. */
  abstract cancel(reason: Error): void

  /** The signal aborted: no longer wanted (another URL accepted the event), the attempt ends now, freeing its connection. */
  protected unwanted(): void {
    this.cancel(cutShort('the attempt is no longer wanted', 'AbortError'))
  }

  expired(): boolean {
    return this.#deadline.expired()
  }

  stopListening(): void {
    this.#deadline.stopListening()
  }

  end(): void {
    this.#deadline.end()
  }
}

/** A deadline for what sends with an abort signal (`fetch`): {@link startDeadline}. */
export interface SignalDeadline extends Deadline {
  /** Aborts the request, or the reading of its body, at the deadline. */
  readonly signal: AbortSignal
  /** Where `BodyDrains` holds it while its body is read after the answer; none before. */
  drainIndex?: number
  /** Aborts now: at the deadline, or because the transport is closing. */
  cancel(reason?: Error): void
}

/**
 * Starts the deadline of an attempt that may take `timeoutMs`, with an abort signal to send with;
 * `signal` (the caller's: close()'s deadline, or an attempt no longer wanted) closes it as the
 * transport's closing does.
 */
export function startDeadline(timeoutMs: number, signal?: AbortSignal | undefined): SignalDeadline {
  const controller = new AbortController()
  const cancel = (reason: Error = transportClosed()): void => {
    deadline.end()
    controller.abort(reason)
  }
  const deadline = armDeadline(timeoutMs, signal, cancel)
  return { ...deadline, signal: controller.signal, cancel }
}
