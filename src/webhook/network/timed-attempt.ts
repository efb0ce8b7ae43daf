import { setUnrefTimeout } from '../../core/timers.js'
import { classifyFailure, type WebhookResponse } from './transport.js'

/** What a cut-short attempt ends with. */
export const cutShort = (message: string, name: string): Error => new DOMException(message, name) as Error

/**
 * What every attempt of eventwire's Node transports keeps: its answer, given once; its deadline,
 * one timer for waiting, connecting, the head and the body; and the request's abort signal, which
 * ends it as the deadline does. No `AbortController` per attempt: the timer and the listener call
 * {@link TimedAttempt.cancel}, which each transport ends its own way.
 */
export abstract class TimedAttempt {
  #answer: ((response: WebhookResponse) => void) | undefined
  readonly #timer: ReturnType<typeof setTimeout>
  readonly #signal: AbortSignal | undefined
  #expired = false

  constructor(answer: (response: WebhookResponse) => void, timeoutMs: number, signal: AbortSignal | undefined) {
    this.#answer = answer
    this.#timer = setUnrefTimeout(() => {
      this.#expired = true
      this.cancel(cutShort(`no complete answer within ${timeoutMs} ms`, 'TimeoutError'))
    }, timeoutMs)
    this.#signal = signal
    // No longer wanted (another URL accepted the event): end it now, freeing its connection.
    signal?.addEventListener('abort', this.#unwanted, { once: true })
  }

  readonly #unwanted = (): void => this.cancel(cutShort('the attempt is no longer wanted', 'AbortError'))

  /** Ends the attempt now: at its deadline, when it is no longer wanted, or when the transport closes. */
  abstract cancel(reason: Error): void

  /** Whether the attempt was answered (its status arrived, or it failed). */
  get answered(): boolean {
    return this.#answer === undefined
  }

  /** The response's status is the attempt's answer. */
  protected answerWith(status: number, retryAfter: string | null): void {
    const answer = this.#answer
    this.#answer = undefined
    answer?.({ ok: true, status, retryAfter })
  }

  /** The attempt failed before its answer: `cause` says why, unless the deadline passed first. */
  fail(cause: unknown): void {
    const answer = this.#answer
    if (answer === undefined) return
    this.#answer = undefined
    answer({ ok: false, failure: this.#expired ? 'timeout' : classifyFailure(cause), cause })
  }

  /** Stops the deadline and lets the signal go: the attempt is over. */
  protected stopTimers(): void {
    clearTimeout(this.#timer)
    this.#signal?.removeEventListener('abort', this.#unwanted)
  }
}
