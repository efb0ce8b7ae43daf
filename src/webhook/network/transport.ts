import type { TransportFailure } from '../../core/transport-failure.js'

export { classifyFailure, type TransportFailure } from '../../core/transport-failure.js'

/** One webhook request, ready to send. */
export interface WebhookRequest {
  /** Full URL, and the same split into origin and path (parsed once per destination). */
  readonly url: string
  readonly origin: string
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  /** The JSON body; its UTF-8 bytes are exactly what was signed. */
  readonly body: string
  /** Time the attempt may take, in ms: connecting, the response headers and reading the body together. */
  readonly timeoutMs: number
  /**
   * The destination's `blockPrivateNetworks`: refuse to connect to an address that is not public,
   * whatever the host name resolves to. A transport of your own must honour it.
   */
  readonly blockPrivateNetworks?: boolean | undefined
  /**
   * Aborted when the answer is no longer wanted: another URL accepted the event first (mode
   * `'any'`, the BullMQ worker; `WebhookDestination` leaves such an attempt to finish in its
   * URL's lane and sends no signal). A transport should end the request then, freeing its
   * connection; one that ignores it only keeps the connection busy until the answer or `timeoutMs`.
   */
  readonly signal?: AbortSignal | undefined
}

/** How one request ended. Transports never throw: failures are values. */
export type WebhookResponse =
  | { readonly ok: true; readonly status: number; readonly retryAfter: string | null }
  | { readonly ok: false; readonly failure: TransportFailure; readonly cause: unknown }

/**
 * Sends webhook requests. eventwire uses HTTP/1.1 of its own on Node and `fetch` elsewhere; pass
 * your own (for a private CA, a proxy, a test double) as the `transport` setting.
 */
export interface WebhookTransport {
  send(request: WebhookRequest): Promise<WebhookResponse>
  /** Releases connections. */
  close?(): Promise<void>
}

/**
 * Transports of eventwire's own whose promise is kept: `send()` never throws nor rejects,
 * resolves a {@link WebhookResponse}, and ends each attempt at its `timeoutMs` itself. The engine's
 * `sendThrough` sends through them as they are, without the guard timer and three promises per
 * attempt it puts around a transport of the user's.
 */
const KEPT_PROMISES = new WeakSet<WebhookTransport>()

/** Marks a transport of eventwire's own as keeping the promise `sendThrough` would otherwise check. */
export function keepsItsPromise<T extends WebhookTransport>(transport: T): T {
  KEPT_PROMISES.add(transport)
  return transport
}

/** Whether `transport` is one of eventwire's own that {@link keepsItsPromise}. */
export function keepsPromise(transport: WebhookTransport): boolean {
  return KEPT_PROMISES.has(transport)
}
