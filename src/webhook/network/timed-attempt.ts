import { AttemptDeadline } from '../../core/attempt-deadline.js'
import { classifyFailure, type WebhookResponse } from './transport.js'

/**
 * An attempt of eventwire's Node transports: on its deadline (core's {@link AttemptDeadline}: one
 * timer, the request's abort signal), answered once, with the response's status or with the
 * failure, classified. Each transport ends its attempts its own way, in `cancel`.
 */
export abstract class TimedAttempt extends AttemptDeadline {
  #answer: ((response: WebhookResponse) => void) | undefined

  constructor(answer: (response: WebhookResponse) => void, timeoutMs: number, signal: AbortSignal | undefined) {
    super(timeoutMs, signal)
    this.#answer = answer
  }

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
    answer({ ok: false, failure: this.expired() ? 'timeout' : classifyFailure(cause), cause })
  }
}
