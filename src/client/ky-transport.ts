import ky, { isHTTPError } from 'ky'
import { abortable } from '../core/abortable.js'
import { bodyExcerpt } from '../core/body-excerpt.js'
import { readBodyStart } from '../core/read-body.js'
import { RateLimitPause, statusVerdict } from './retry-policy.js'
import { sendWithRetries, type AttemptOutcome } from './send-loop.js'
import {
  batchHeaders,
  RESPONSE_READ_BYTES,
  type BatchBody,
  type BatchTransport,
  type TransportSettings,
} from './transport.js'

/** Lets go of a response the client has no use for, so its connection is not held. */
function discard(response: Response): void {
  void response.body?.cancel().catch(() => undefined)
}

/**
 * The client's transport over `fetch` (the global one, or the `fetch` option), with ky making each
 * attempt: the transport of browsers, Deno, Bun and Workers, and of Node when `fetch` is given.
 * Retries, their delays and the 429 pause are {@link sendWithRetries}'s, shared with the undici
 * transport; each attempt is one ky request (ky's own retries off), which times the response
 * headers and turns a status >= 300 into ky's `HTTPError`.
 */
export function createKyTransport(settings: TransportSettings): BatchTransport {
  const pause = new RateLimitPause()
  const headersFor = batchHeaders(settings)
  const api = ky.create({
    method: 'post',
    timeout: settings.timeout,
    throwHttpErrors: true,
    // A followed 301-303 turns the POST into a GET without the batch, whose 2xx would count as
    // delivered; a 307 or 308 would resend the write key to wherever it points. A redirect is
    // answered like any other final status: ERR_REJECTED (in browsers with status 0, an opaque
    // redirect), so the endpoint gets fixed.
    redirect: 'manual',
    retry: 0,
    ...(settings.fetch ? { fetch: settings.fetch } : {}),
  })

  const attempt = async (body: BatchBody, signal: AbortSignal, keepalive: boolean): Promise<AttemptOutcome> => {
    const started = Date.now()
    // One attempt's timeout covers connect, headers and body together: ky times the first two,
    // the body is read within what is left.
    const timeLeft = () => settings.timeout - (Date.now() - started)
    let response: Response
    try {
      response = await abortable(
        api(settings.url, { body, headers: headersFor(body), signal, ...(keepalive ? { keepalive } : {}) }),
        signal,
        discard,
      )
    } catch (error) {
      // Anything but an answer with a status (a network error, the timeout, close()'s deadline, a
      // custom fetch that resolved to something else) is worth another attempt.
      const status: unknown = isHTTPError(error) ? error.response.status : undefined
      if (!isHTTPError(error) || typeof status !== 'number')
        return { verdict: 'retry', status: undefined, retryAfter: null, error }
      if (statusVerdict(status) === 'reject') {
        // A refusal is final: what the server says about it is worth the rest of the attempt's time.
        return { verdict: 'reject', status, error, responseText: await bodyExcerpt(error.response, timeLeft(), signal) }
      }
      discard(error.response)
      return { verdict: 'retry', status, retryAfter: error.response.headers.get('retry-after'), error }
    }
    await readBodyStart(response, { maxBytes: RESPONSE_READ_BYTES, ms: timeLeft(), signal })
    return { verdict: 'delivered', status: response.status }
  }

  return {
    name: 'fetch',
    send: (body, options) =>
      sendWithRetries((signal) => attempt(body, signal, options.keepalive), options, settings.retry, pause),
  }
}
