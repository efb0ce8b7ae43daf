import type { ResponseHead } from './http1-response.js'
import { TimedAttempt } from './timed-attempt.js'
import type { WebhookRequest, WebhookResponse } from './transport.js'

/** Where an attempt is: the connection carrying it can be told to drop it. */
export interface Carrier {
  /** Ends the exchange of the attempt it carries now: the connection cannot carry another request. */
  drop(): void
}

/**
 * One request's attempt on the HTTP/1.1 transport: answered once (at the response's head, or with
 * the failure), ended once (its body read, or given up). One deadline covers waiting for a
 * connection, connecting, the head and the body; the abort signal ends it as the deadline does.
 */
export class Http1Attempt extends TimedAttempt {
  readonly request: WebhookRequest
  /** Done with: answered, and its body read or dropped. A queue passes an ended attempt by. */
  ended = false
  /** The connection carrying it, while one does. */
  carrier: Carrier | undefined = undefined
  /** Sent on a kept-alive connection that the receiver had closed: sent once more, on a new one. */
  resent = false

  constructor(request: WebhookRequest, answer: (response: WebhookResponse) => void) {
    super(answer, request.timeoutMs, request.signal)
    this.request = request
  }

  /** The response's head arrived: its status is the attempt's answer. */
  answerHead(head: ResponseHead): void {
    this.answerWith(head.status, head.retryAfter)
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
    super.end()
  }
}
