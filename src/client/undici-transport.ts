import type { IncomingHttpHeaders } from 'node:http'
import { Pool, type Dispatcher } from 'undici'
import { EXCERPT_BYTES, excerptOf } from '../core/body-excerpt.js'
import { startDeadline, type SignalDeadline } from '../core/attempt-deadline.js'
import { BodyDrains } from '../core/body-drains.js'
import { RESPONSE_BODY_CAP } from '../core/limits.js'
import { HTTPError } from './http-error.js'
import { statusVerdict } from './retry-policy.js'
import {
  batchHeaders,
  noAnswer,
  type AttemptOutcome,
  type BatchBody,
  type BatchTransport,
  type TransportSettings,
} from './transport.js'

/** A response body as undici hands it over: a Node `Readable` with `dump()`. */
type Body = Dispatcher.ResponseData['body']

/** Reads at most `maxBytes` of a body, then destroys it (and the connection under it) unless it had ended. Never rejects. */
async function readStart(body: Body, maxBytes: number): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = []
  let read = 0
  try {
    for await (const chunk of body as AsyncIterable<Uint8Array>) {
      chunks.push(chunk)
      read += chunk.byteLength
      // Leaving the loop destroys the body, and undici the connection that still carries the rest.
      if (read >= maxBytes) break
    }
  } catch {
    // Cut off (the deadline) or broken half way: what came before is what there is.
  }
  return chunks
}

/**
 * Reads at most {@link RESPONSE_BODY_CAP} of a body and drops it: a body that ends within them
 * leaves its connection to be reused; a longer one (or one whose `Content-Length` says so) is
 * destroyed, and its connection closed. Never rejects.
 */
function drain(body: Body): Promise<void> {
  return body.dump({ limit: RESPONSE_BODY_CAP }).catch(() => undefined)
}

function headersOf(raw: IncomingHttpHeaders): Headers {
  const headers = new Headers()
  for (const [name, value] of Object.entries(raw)) {
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one)
  }
  return headers
}

/**
 * The client's transport on Node: undici's `Pool.request` over keep-alive connections to the
 * endpoint's origin, one attempt per call (the client's retry loop runs above it, as above the
 * `fetch` transports). Without `fetch`'s `Request`, web streams and combined signals, a request
 * costs a fraction of the CPU. Each attempt has one deadline, `timeout`, for connecting,
 * the response headers and the body read after them; redirects are not followed.
 */
export function createUndiciTransport(settings: TransportSettings): BatchTransport {
  const { origin, pathname } = new URL(settings.url)
  const pool = new Pool(origin)
  const headersFor = batchHeaders(settings)
  // Bodies of retried answers, read after their attempt: closing the transport cuts them short.
  const drains = new BodyDrains<SignalDeadline>()

  const attempt = async (body: BatchBody, { signal }: { signal: AbortSignal }): Promise<AttemptOutcome> => {
    // close()'s deadline ends the attempt at once, and the reading of its body with it.
    const deadline = startDeadline(settings.timeout, signal)
    // Ends with the attempt, unless the reading of a retried answer's body took it over.
    let handedOver = false
    try {
      const response = await pool.request({
        method: 'POST',
        path: pathname,
        headers: headersFor(body),
        body,
        // Aborts the request and, once the headers are in, its body: the whole exchange has one deadline.
        signal: deadline.signal,
        // undici's own timers restart at every byte; the deadline alone bounds the attempt.
        headersTimeout: 0,
        bodyTimeout: 0,
      })
      const status = response.statusCode
      const verdict = statusVerdict(status)
      if (verdict === 'delivered') {
        await drain(response.body)
        return { verdict, status }
      }
      const error = new HTTPError(
        { status, statusText: response.statusText, headers: headersOf(response.headers) },
        'POST',
        settings.url,
      )
      if (verdict === 'reject') {
        return { verdict, status, error, responseText: excerptOf(await readStart(response.body, EXCERPT_BYTES)) }
      }
      // A retried answer's body is read while the batch waits for its retry, within the attempt's deadline.
      handedOver = true
      drains.start(deadline, () => drain(response.body))
      return { verdict, status, retryAfter: error.response.headers.get('retry-after'), error }
    } catch (error) {
      return noAnswer(error, deadline)
    } finally {
      if (handedOver) deadline.stopListening()
      else deadline.end()
    }
  }

  return {
    name: 'undici',
    attempt,
    async close() {
      drains.cancelAll()
      await pool.close().catch(() => undefined)
    },
  }
}
