import { abortable } from '../core/abortable.js'
import { startDeadline } from '../core/attempt-deadline.js'
import { bodyExcerpt } from '../core/body-excerpt.js'
import { RESPONSE_BODY_CAP } from '../core/limits.js'
import { readBodyStart } from '../core/read-body.js'
import { HTTPError } from './http-error.js'
import { statusVerdict } from './retry-policy.js'
import { batchHeaders, noAnswer, type BatchTransport, type TransportSettings } from './transport.js'

// One attempt over `fetch`, for the two transports that send with it: ky's (Deno, Bun, Workers,
// Node with a `fetch` of the user's) and `fetch` itself (browsers). They differ only in what makes
// the request; the deadline, the check and reading of the answer and its sorting are here, once.

/**
 * Lets go of a response the client has no use for, so its connection is not held. Anything a
 * `fetch` of the user's resolved may come here: what has no body to cancel is left as it is.
 */
function discard(response: unknown): void {
  try {
    void (response as Response).body?.cancel().catch(() => undefined)
  } catch {}
}

/** Whether a `fetch` resolved a `Response`, or something shaped as one: an integer `status` and `headers.get`. */
function isResponse(value: unknown): value is Response {
  const { status, headers } = (value ?? {}) as { status?: unknown; headers?: { get?: unknown } }
  return Number.isInteger(status) && typeof headers?.get === 'function'
}

/**
 * The attempt function of a transport over `fetch`: `request` sends the POST described by its
 * init (ky's request, or `fetch` itself). One deadline, `timeout`, covers the response and the
 * part of its body that is read; close()'s signal ends the attempt at once. Never rejects: a
 * network error, the deadline, or a `fetch` that throws is `retry`; an answer that is not a
 * `Response` nor shaped as one (an integer `status`, `headers.get`), such as a test double's
 * plain object, `undefined` or a string, is `invalid`.
 */
export function fetchAttempt(
  settings: TransportSettings,
  request: (init: RequestInit) => Promise<unknown>,
): BatchTransport['attempt'] {
  const headersFor = batchHeaders(settings)
  const { batchUrl: url, timeout } = settings
  return async (body, { signal, keepalive }) => {
    // close()'s deadline ends the attempt at once.
    const deadline = startDeadline(timeout, signal)
    try {
      const init: RequestInit = {
        method: 'POST',
        headers: headersFor(body),
        body,
        signal: deadline.signal,
        // A followed 301-303 turns the POST into a GET without the batch, whose 2xx would count
        // as delivered; a 307 or 308 would resend the write key to wherever it points. A redirect
        // is a final status (in browsers status 0, an opaque redirect), so the endpoint gets fixed.
        redirect: 'manual',
      }
      if (keepalive) init.keepalive = true
      const response = await abortable(request(init), deadline.signal, discard)
      if (!isResponse(response)) {
        return {
          verdict: 'invalid',
          error: new TypeError('the fetch option resolved something that is not a Response'),
        }
      }
      const { status } = response
      const verdict = statusVerdict(status)
      if (verdict === 'delivered') {
        // The deadline's signal ends the read at the attempt's time limit; `timeout` only bounds it.
        await readBodyStart(response, { maxBytes: RESPONSE_BODY_CAP, ms: timeout, signal: deadline.signal })
        return { verdict, status }
      }
      const error = new HTTPError(response, 'POST', url)
      if (verdict === 'reject') {
        // A refusal is final: what the server says about it is worth the rest of the attempt's time.
        return { verdict, status, error, responseText: await bodyExcerpt(response, timeout, deadline.signal) }
      }
      discard(response)
      return { verdict, status, retryAfter: response.headers.get('retry-after'), error }
    } catch (error) {
      return noAnswer(error, deadline)
    } finally {
      deadline.end()
    }
  }
}
