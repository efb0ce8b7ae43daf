import type { Http1Answer, Http1Request } from './request.js'
import type { ResponseHead } from './response-reader.js'
import { TimedAttempt } from './timed-attempt.js'

/** Where an attempt is: the connection carrying it can be told to drop it. */
export interface Carrier {
  /** Ends the exchange of the attempt it carries now: the connection cannot carry another request. */
  drop(): void
}

/**
 * One request's attempt on the HTTP/1.1 stack: answered once (at the response's head, or with the
 * failure), ended once (its body read, or given up). One deadline covers waiting for a
 * connection, connecting, the head and the body; the abort signal ends it as the deadline does.
 * A refusal the request asked to keep (`keepRefusal`) is answered once its body is read, cut
 * short or given up: what arrived by then is what it holds.
 */
export class Http1Attempt extends TimedAttempt<ResponseHead> {
  readonly request: Http1Request
  /** Done with: answered, and its body read or dropped. A queue passes an ended attempt by. */
  ended = false
  /** The connection carrying it, while one does. */
  carrier: Carrier | undefined = undefined
  /** Sent on a kept-alive connection that the receiver had closed: sent once more, on a new one. */
  resent = false
  /** A kept refusal whose body is still being read: the answer, once it is. */
  #refusal: ResponseHead | undefined = undefined

  constructor(request: Http1Request, answer: (response: Http1Answer) => void) {
    super(answer, request.timeoutMs, request.signal)
    this.request = request
  }

  /** The response's head arrived: the attempt's answer, now or (a kept refusal) once its body is read. */
  answerHead(head: ResponseHead): void {
    if (head.body === undefined) this.answerWith(head)
    else this.#refusal = head
  }

  /** Failed, unless a kept refusal's head arrived: then that is the answer, with what came of its body. */
  override fail(cause: unknown): void {
    if (this.#refusal === undefined) super.fail(cause)
    else this.#answerRefusal()
  }

  /** Answered if it was not, ended, and dropped by its connection. */
  cancel(reason: Error): void {
    if (this.ended) return
    this.fail(reason)
    const carrier = this.carrier
    this.end()
    carrier?.drop()
  }

  override end(): void {
    if (this.ended) return
    this.ended = true
    this.carrier = undefined
    this.#answerRefusal()
    super.end()
  }

  #answerRefusal(): void {
    const refusal = this.#refusal
    this.#refusal = undefined
    if (refusal !== undefined) this.answerWith(refusal)
  }
}
