import { setUnrefTimeout } from '../../core/timers.js'
import type { ResponseHead } from './http1-response.js'
import { classifyFailure, type WebhookRequest, type WebhookResponse } from './transport.js'

/** What a cut-short attempt ends with. */
export const cutShort = (message: string, name: string): Error => new DOMException(message, name) as Error

/** Where an attempt is: the connection carrying it can be told to drop it. */
export interface Carrier {
  /** Ends the attempt's exchange now: the connection cannot carry another request. */
  drop(attempt: Http1Attempt): void
}

/**
 * One request's attempt on the HTTP/1.1 transport: answered once (at the response's head, or with
 * the failure), ended once (its body read, or given up). One deadline covers waiting for a
 * connection, connecting, the head and the body; the abort signal ends it as the deadline does.
 */
export class Http1Attempt {
  readonly request: WebhookRequest
  #answer: ((response: WebhookResponse) => void) | undefined
  readonly #timer: ReturnType<typeof setTimeout>
  #expired = false
  /** Done with: answered, and its body read or dropped. A queue passes an ended attempt by. */
  ended = false
  /** The connection carrying it, while one does. */
  carrier: Carrier | undefined = undefined
  /** Sent on a kept-alive connection that the receiver had closed: sent once more, on a new one. */
  resent = false

  constructor(request: WebhookRequest, answer: (response: WebhookResponse) => void) {
    this.request = request
    this.#answer = answer
    this.#timer = setUnrefTimeout(() => {
      this.#expired = true
      this.cancel(cutShort(`no complete answer within ${request.timeoutMs} ms`, 'TimeoutError'))
    }, request.timeoutMs)
    // No longer wanted (another URL accepted the event): end it now, freeing its connection.
    request.signal?.addEventListener('abort', this.#unwanted, { once: true })
  }

  readonly #unwanted = (): void => this.cancel(cutShort('the attempt is no longer wanted', 'AbortError'))

  /** Whether the attempt was answered (its head arrived, or it failed). */
  get answered(): boolean {
    return this.#answer === undefined
  }

  /** The response's head arrived: its status is the attempt's answer. */
  answerWith(head: ResponseHead): void {
    const answer = this.#answer
    this.#answer = undefined
    answer?.({ ok: true, status: head.status, retryAfter: head.retryAfter })
  }

  /** The attempt failed before its answer: `cause` says why, unless the deadline passed first. */
  fail(cause: unknown): void {
    const answer = this.#answer
    if (answer === undefined) return
    this.#answer = undefined
    answer({ ok: false, failure: this.#expired ? 'timeout' : classifyFailure(cause), cause })
  }

  /** Ends it now (its deadline, its signal, the transport closing): answered if it was not, and dropped by its connection. */
  cancel(reason: Error): void {
    if (this.ended) return
    this.fail(reason)
    const carrier = this.carrier
    this.end()
    carrier?.drop(this)
  }

  end(): void {
    if (this.ended) return
    this.ended = true
    this.carrier = undefined
    clearTimeout(this.#timer)
    this.request.signal?.removeEventListener('abort', this.#unwanted)
  }
}
