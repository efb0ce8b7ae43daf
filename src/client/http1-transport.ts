import { transportClosed } from '../core/attempt-deadline.js'
import { EXCERPT_BYTES, excerptOf } from '../core/body-excerpt.js'
import { Http1Agent } from '../http1/agent.js'
import { Http1Attempt } from '../http1/attempt.js'
import { proxyRule } from '../http1/proxy.js'
import type { Http1Answer } from '../http1/request.js'
import { HTTPError } from './http-error.js'
import { statusVerdict } from './retry-policy.js'
import {
  batchHeaders,
  type AttemptOutcome,
  type BatchBody,
  type BatchTransport,
  type TransportSettings,
} from './transport.js'

/** A batch's attempt: its signal is close()'s deadline, so an abort ends it as the transport's closing. */
class BatchAttempt extends Http1Attempt {
  protected override unwanted(): void {
    this.cancel(transportClosed())
  }
}

/**
 * The header fields of a refusal as `Headers`, for the error. A field `Headers` will not take (a
 * name with a space, say, which a hostile endpoint may send) is left out rather than thrown on.
 */
function headersOf(fields: readonly (readonly [string, string])[] | undefined): Headers {
  const headers = new Headers()
  for (const [name, value] of fields ?? []) {
    try {
      headers.append(name, value)
    } catch {
      // Not a field name or value that Headers allows: nothing an error needs.
    }
  }
  return headers
}

/**
 * The client's transport on Node: the HTTP/1.1 stack the webhook engine sends with (src/http1),
 * over keep-alive connections to the endpoint's origin, one attempt per call (the client's retry
 * loop runs above it), at most `maxConcurrentRequests` of them. A connection carries another
 * batch only after a 2xx. Each attempt has one deadline, `timeout`, for waiting for a
 * connection, connecting, the response's head and its body. A status that is not 2xx is
 * answered once its head and the start of its body are read, for the error to show. Redirects
 * are not followed.
 */
export function createHttp1Transport(settings: TransportSettings): BatchTransport {
  const { origin, pathname, search } = new URL(settings.batchUrl)
  const path = pathname + search
  // A connection is in use until its answer's body is read, or its attempt's deadline: an endpoint
  // that trickles a body holds it that long, and the next batch waits for it rather than opening
  // another. So the client holds at most `maxConcurrentRequests` sockets, whatever the endpoint does.
  const agent = new Http1Agent({
    connections: settings.maxConcurrentRequests,
    proxy: proxyRule('proxy', settings.proxy),
  })
  const headersFor = batchHeaders(settings)

  const outcomeOf = (answer: Http1Answer): AttemptOutcome => {
    if (!answer.ok) return { verdict: 'retry', status: undefined, retryAfter: null, error: answer.cause }
    const { status } = answer
    const verdict = statusVerdict(status)
    if (verdict === 'delivered') return { verdict, status }
    const error = new HTTPError(
      { status, statusText: answer.statusText, headers: headersOf(answer.fields) },
      'POST',
      settings.batchUrl,
    )
    if (verdict === 'reject') return { verdict, status, error, responseText: excerptOf(answer.body ?? []) }
    return { verdict, status, retryAfter: answer.retryAfter, error }
  }

  return {
    name: 'http1',
    attempt: (body: BatchBody, { signal }) =>
      new Promise<AttemptOutcome>((resolve) => {
        const request = {
          url: settings.batchUrl,
          origin,
          path,
          headers: headersFor(body),
          body,
          timeoutMs: settings.timeout,
          signal,
          keepRefusal: EXCERPT_BYTES,
        }
        agent.send(new BatchAttempt(request, (answer) => resolve(outcomeOf(answer))), false)
      }),
    close: () => agent.close(),
  }
}
