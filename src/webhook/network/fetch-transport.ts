import { startDeadline, type SignalDeadline } from '../../core/attempt-deadline.js'
import { BodyDrains } from '../../core/body-drains.js'
import { RESPONSE_BODY_CAP } from '../../core/limits.js'
import { refusal } from '../../core/address-guard.js'
import { classifyFailure, type WebhookTransport } from './transport.js'

/** Reads and drops at most {@link RESPONSE_BODY_CAP} bytes; a longer body is cancelled, and its connection with it. */
async function discard(body: ReadableStream<Uint8Array> | null): Promise<void> {
  if (!body) return
  const reader = body.getReader()
  let read = 0
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    read += chunk.value.byteLength
    if (read > RESPONSE_BODY_CAP) return reader.cancel()
  }
}

/**
 * Sends webhook requests with `fetch`: the transport of browsers, Deno, Bun and Workers. Redirects
 * are not followed. Each attempt ends within its `timeoutMs` (connecting, headers and body
 * together); the status decides, and at most 64 KiB of the body is read, after the attempt, to
 * reuse the connection. `fetch` gives no hook into name resolution: with `blockPrivateNetworks`,
 * literal addresses are checked before sending, host names are not.
 *
 * @example
 * ```ts
 * import { createFetchTransport, WebhookDestination } from 'eventwire/webhook'
 *
 * // On Node too, e.g. to send through a fetch that a proxy or a test wraps.
 * const destination = new WebhookDestination({
 *   webhooks: [{ url: 'https://hooks.example.com/in' }],
 *   transport: createFetchTransport({ fetch: (input, init) => fetch(input, init) }),
 * })
 * ```
 */
export function createFetchTransport(options: { fetch?: typeof fetch | undefined } = {}): WebhookTransport {
  const send = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init))
  const drains = new BodyDrains<SignalDeadline>()
  return {
    async send(request) {
      if (request.blockPrivateNetworks) {
        const refused = refusal(new URL(request.url).hostname)
        if (refused !== undefined) return { ok: false, failure: 'blocked', cause: refused }
      }
      // No longer wanted (another URL accepted the event): ended now, freeing its connection.
      const deadline = startDeadline(request.timeoutMs, request.signal)
      try {
        const response = await send(request.url, {
          method: 'POST',
          headers: request.headers,
          body: request.body,
          redirect: 'manual',
          signal: deadline.signal,
        })
        drains.start(deadline, () => discard(response.body))
        return { ok: true, status: response.status, retryAfter: response.headers.get('retry-after') }
      } catch (cause) {
        deadline.end()
        return { ok: false, failure: deadline.expired() ? 'timeout' : classifyFailure(cause), cause }
      } finally {
        // Answered: the body read after it ends at the deadline, or as the transport closes.
        deadline.stopListening()
      }
    },
    async close() {
      drains.cancelAll()
    },
  }
}
