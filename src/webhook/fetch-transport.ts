import { classifyFailure, type WebhookTransport } from './transport.js'

/**
 * Sends webhook requests with `fetch`: the transport of browsers, Deno, Bun and Workers. Redirects
 * are not followed; a timeout aborts the request.
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
  return {
    async send(request) {
      try {
        const response = await send(request.url, {
          method: 'POST',
          headers: request.headers,
          body: request.body,
          redirect: 'manual',
          signal: AbortSignal.timeout(request.timeoutMs),
        })
        // Reading the body lets the connection be reused.
        await response.arrayBuffer().catch(() => undefined)
        return { ok: true, status: response.status, retryAfter: response.headers.get('retry-after') }
      } catch (cause) {
        return { ok: false, failure: classifyFailure(cause), cause }
      }
    },
  }
}
