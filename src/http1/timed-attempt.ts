import { AttemptDeadline } from '../core/attempt-deadline.js'
import { classifyFailure } from '../core/transport-failure.js'
import type { Http1Failure } from './request.js'

/**
 * An attempt of eventwire's Node transports: on its deadline (core's {@link AttemptDeadline}: one
 * timer, the request's abort signal), answered once, with the response (`Ok`) or with the
 * failure, classified. Each transport ends its attempts its own way, in `cancel`.
 */
export abstract class TimedAttempt<Ok extends { readonly ok: true }> extends AttemptDeadline {
  #answer: ((response: Ok | Http1Failure) => void) | undefined

  constructor(answer: (response: Ok | Http1Failure) => void, timeoutMs: number, signal: AbortSignal | undefined) {
    super(timeoutMs, signal)
    this.#answer = answer
  }

  /** Whether the attempt was answered (its response arrived, or it failed). */
  get answered(): boolean {
    return this.#answer === undefined
  }

  /** `response` is the attempt's answer. */
  protected answerWith(response: Ok): void {
    const answer = this.#answer
    this.#answer = undefined
    answer?.(response)
  }

  /** The attempt failed before its answer: `cause` says why, unless the deadline passed first. */
  fail(cause: unknown): void {
    const answer = this.#answer
    if (answer === undefined) return
    this.#answer = undefined
    answer({ ok: false, failure: this.expired() ? 'timeout' : classifyFailure(cause), cause })
  }
}
