import { abortable } from '../core/abortable.js'
import { startDeadline } from '../core/attempt-deadline.js'
import { bodyExcerpt } from '../core/body-excerpt.js'
import { readBodyStart } from '../core/read-body.js'
import { HTTPError } from './http-error.js'
import { RateLimitPause, statusVerdict } from './retry-policy.js'
import { noAnswer, sendWithRetries, type AttemptOutcome } from './send-loop.js'
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
 * The client's transport in browsers: `fetch` itself (the global one, or the `fetch` option), with
 * the retries, delays and 429 pause of {@link sendWithRetries}, as the other transports. It does
 * what the ky transport does on the other `fetch` runtimes without ky, whose retries, hooks and
 * option merging the client does not use and which would be some 4 KB of every page's download.
 * Each attempt has one deadline, `timeout`, for the response and the part of its body that is
 * read; redirects are not followed (`redirect: 'manual'`: a browser then shows status 0, refused).
 */
export function createFetchTransport(settings: TransportSettings): BatchTransport {
  const pause = new RateLimitPause()
  const headersFor = batchHeaders(settings)
  const { url } = settings

  const attempt = async (body: BatchBody, signal: AbortSignal, keepalive: boolean): Promise<AttemptOutcome> => {
    const deadline = startDeadline(settings.timeout)
    // close()'s deadline ends the attempt at once.
    const onClose = () => deadline.cancel()
    signal.addEventListener('abort', onClose)
    const started = Date.now()
    const timeLeft = () => settings.timeout - (Date.now() - started)
    try {
      const init: RequestInit = {
        method: 'POST',
        headers: headersFor(body),
        body,
        signal: deadline.signal,
        redirect: 'manual',
      }
      if (keepalive) init.keepalive = true
      const response = await abortable(
        // A `fetch` of the user's gets one `Request`, as ky hands it on the other runtimes.
        settings.fetch ? settings.fetch(new Request(url, init)) : fetch(url, init),
        deadline.signal,
        discard,
      )
      const { status } = response
      const verdict = statusVerdict(status)
      if (verdict === 'delivered') {
        await readBodyStart(response, { maxBytes: RESPONSE_READ_BYTES, ms: timeLeft(), signal: deadline.signal })
        return { verdict, status }
      }
      const error = new HTTPError(response, 'POST', url)
      if (verdict === 'reject') {
        // A refusal is final: what the server says about it is worth the rest of the attempt's time.
        return { verdict, status, error, responseText: await bodyExcerpt(response, timeLeft(), deadline.signal) }
      }
      discard(response)
      return { verdict, status, retryAfter: response.headers.get('retry-after'), error }
    } catch (error) {
      // A network error, the deadline, close(), or a custom fetch that threw or resolved to something else.
      return noAnswer(error, deadline)
    } finally {
      signal.removeEventListener('abort', onClose)
      deadline.end()
    }
  }

  return {
    name: 'fetch',
    send: (body, options) =>
      sendWithRetries((signal) => attempt(body, signal, options.keepalive), options, settings.retry, pause),
  }
}
