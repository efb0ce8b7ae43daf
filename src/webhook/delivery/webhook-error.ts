import { EventwireError } from '../../core/errors/eventwire-error.js'

/** Codes of {@link WebhookError}: why one request to one URL failed. */
export type WebhookErrorCode =
  | 'ERR_HTTP_STATUS'
  | 'ERR_TIMEOUT'
  | 'ERR_NETWORK'
  | 'ERR_TLS_CERTIFICATE'
  | 'ERR_BLOCKED_TARGET'
  | 'ERR_PROXY'
  | 'ERR_CLOSED'
  | 'ERR_CALLBACK'
  | 'ERR_BACKLOG_FULL'
  | 'ERR_CIRCUIT_OPEN'
  | 'ERR_DESTINATION_DISABLED'
  | 'ERR_UNKNOWN_DESTINATION'

/**
 * Why an attempt to one URL failed:
 *
 * - `ERR_HTTP_STATUS`: the receiver answered a status other than 2xx (`status` says which).
 * - `ERR_TIMEOUT`: no response within `timeoutMs`.
 * - `ERR_NETWORK`: the connection failed (refused, reset, DNS...).
 * - `ERR_TLS_CERTIFICATE`: the HTTPS receiver's certificate is self-signed, expired or for another
 *   host; no HTTP request was sent.
 * - `ERR_BLOCKED_TARGET`: `blockPrivateNetworks` is on and the URL's address, or an address its
 *   host resolved to, is not on the public internet; no connection was made.
 * - `ERR_PROXY`: the egress proxy could not be reached, or refused to open the tunnel (a 407, a
 *   403, a 5xx of its own); nothing reached the receiver. Retried, and never counted against the
 *   receiver's breaker.
 * - `ERR_CLOSED`: the destination was closed while the event waited for a retry.
 * - `ERR_CALLBACK`: the `backoff` setting broke its contract (threw, or returned something other
 *   than a finite number of ms >= 0): the event is not retried. Also the code when the signature
 *   could not be computed (the runtime's crypto failed or did not answer within `timeoutMs`):
 *   nothing is sent. `cause` is what was thrown, or an error naming what was returned; final,
 *   since the same call would fail again.
 * - `ERR_BACKLOG_FULL`: `maxPendingPerUrl` deliveries were already waiting for this URL; the
 *   event was not queued for it (its other URLs go on).
 * - `ERR_CIRCUIT_OPEN`: the URL's circuit breaker was open when the event's retry window ended;
 *   `cause` is the URL's last failure (on a BullMQ worker, the failure that opened the breaker,
 *   as any worker of the queue saw it).
 * - `ERR_DESTINATION_DISABLED`, `ERR_UNKNOWN_DESTINATION`: in memory, the event's destination was
 *   disabled or deleted (`destinations.disable()`, `delete()`) while the event waited; its URL got
 *   no further request.
 */
export class WebhookError extends EventwireError<WebhookErrorCode> {
  /** The URL the attempt went to. */
  readonly url: string
  /** HTTP status, for `ERR_HTTP_STATUS`. */
  readonly status: number | undefined

  constructor(
    code: WebhookErrorCode,
    url: string,
    message: string,
    details: { status?: number; cause?: unknown } = {},
  ) {
    super(code, message, details.cause === undefined ? undefined : { cause: details.cause })
    this.url = url
    this.status = details.status
  }
}
