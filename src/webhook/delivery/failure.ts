import { describeError } from '../../core/describe-error.js'
import type { Endpoint } from '../network/endpoint.js'
import { WebhookError, type WebhookErrorCode } from './webhook-error.js'

/**
 * Why an attempt failed, as plain data: cheap to keep for every event waiting for a retry, and
 * turned into a {@link WebhookError} only when reported.
 */
export interface AttemptFailure {
  readonly code: WebhookErrorCode
  readonly status?: number
  readonly cause?: unknown
  /** For `ERR_CALLBACK`: which function failed. */
  readonly callback?: 'backoff' | 'signer'
}

/** C0 and C1 control characters and bidirectional overrides, runs of them: a cause's text comes from the network. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]+/g

/** Most characters of a failure's cause kept in Redis, a dead letter or a log. */
export const MAX_CAUSE_TEXT = 200

/**
 * A failure's cause as one line to keep (`connect ECONNREFUSED 127.0.0.1:8790`): bounded and
 * without control characters, since it came from the network and is shown in dashboards and logs.
 */
export function causeText(cause: unknown): string {
  // Our own errors' messages name their cause already (`Could not reach … (connect ECONNREFUSED …).`).
  const text = cause instanceof WebhookError ? cause.message : describeError(cause)
  return text.replace(CONTROL, ' ').slice(0, MAX_CAUSE_TEXT)
}

/**
 * The error a result or a notice carries for a failure at `endpoint`. The endpoint, not the
 * failure, knows the timeout: a failure restored from Redis keeps only its code and status.
 */
export function toWebhookError(
  failure: AttemptFailure,
  { url, timeoutMs }: Pick<Endpoint, 'url' | 'timeoutMs'>,
): WebhookError {
  const { code, status, cause, callback } = failure
  const details = { ...(status === undefined ? {} : { status }), ...(cause === undefined ? {} : { cause }) }
  switch (code) {
    case 'ERR_HTTP_STATUS':
      return new WebhookError(code, url, `${url} answered HTTP ${status}.`, details)
    case 'ERR_TIMEOUT':
      return new WebhookError(code, url, `${url} did not answer within ${timeoutMs} ms.`, details)
    case 'ERR_NETWORK':
      return new WebhookError(code, url, `Could not reach ${url} (${describeError(cause)}).`, details)
    case 'ERR_TLS_CERTIFICATE':
      return new WebhookError(
        code,
        url,
        `${url} presented a certificate that is not trusted (self-signed, expired or for another host); no request was sent. Use a certificate from a public CA, or pass a transport that trusts your CA.`,
        details,
      )
    case 'ERR_BLOCKED_TARGET':
      return new WebhookError(
        code,
        url,
        `${url} is or resolves to an address that is not public (${describeError(cause)}); no connection was made. Use a public receiver, or turn blockPrivateNetworks off for internal ones.`,
        details,
      )
    case 'ERR_PROXY':
      return new WebhookError(
        code,
        url,
        `The egress proxy did not open a tunnel to ${url} (${describeError(cause)}); nothing reached the receiver. Check the proxy, its address and its credentials.`,
        details,
      )
    case 'ERR_BACKLOG_FULL':
      return new WebhookError(
        code,
        url,
        `Too many deliveries were waiting for ${url} (maxPendingPerUrl); this event was not queued for it. The receiver is slower than the events come, or down: see destination.backlog().`,
        details,
      )
    case 'ERR_CIRCUIT_OPEN':
      return new WebhookError(
        code,
        url,
        `${url} kept failing, so its circuit breaker was open when this event's retry window ended${cause === undefined ? '' : ` (last: ${describeError(cause)})`}.`,
        details,
      )
    case 'ERR_DESTINATION_DISABLED':
    case 'ERR_UNKNOWN_DESTINATION':
      return new WebhookError(
        code,
        url,
        code === 'ERR_DESTINATION_DISABLED'
          ? `The event's destination was disabled, so ${url} got no further request. Enable the destination and send the event again.`
          : `The event's destination was deleted, so ${url} got no further request. Add it again and send the event again.`,
        details,
      )
    case 'ERR_CLOSED':
      // Also for an event never sent yet: "retried" would say it was tried.
      return new WebhookError(
        code,
        url,
        `The destination was closed while this event waited for ${url}, so it got no further request. Deliver the event again once a destination runs.`,
        details,
      )
    case 'ERR_CALLBACK':
      return callback === 'signer'
        ? new WebhookError(
            code,
            url,
            `The platform's signer failed (${describeError(cause)}), and nothing is sent unsigned: ${url} got no further request. A signer must return the signature as a string of visible ASCII, within timeoutMs.`,
            details,
          )
        : new WebhookError(
            code,
            url,
            `The backoff setting failed (${describeError(cause)}), so ${url} was not retried after its last failure${status === undefined ? '' : ` (HTTP ${status})`}. Make backoff return a finite number of ms >= 0 for every attempt number; a lookup table should repeat its last entry.`,
            details,
          )
  }
}

/**
 * The failure one more delivery keeps after failing at a URL: `last`, the one the URL's previous
 * failed delivery kept, when both say the same thing (code, status, the signer or backoff, and a
 * cause of the same kind with the same message and code); else `failure`. A URL that refuses
 * connections or times out fails every delivery waiting for it the same way, and each error
 * carries a stack trace of some 400 bytes: kept once per URL instead of once per delivery.
 */
export function sharedFailure(failure: AttemptFailure, last: AttemptFailure | undefined): AttemptFailure {
  if (
    last === undefined ||
    last.code !== failure.code ||
    last.status !== failure.status ||
    last.callback !== failure.callback ||
    !sameCause(last.cause, failure.cause)
  ) {
    return failure
  }
  return last
}

/**
 * Whether two causes say the same: both absent, or errors of one class with the same own message,
 * code and cause. Read as data, never through a getter (an accessor never matches): a cause from
 * a transport of the user's may be hostile.
 */
function sameCause(a: unknown, b: unknown): boolean {
  if (a === b) return true
  try {
    return (
      a instanceof Error &&
      b instanceof Error &&
      Object.getPrototypeOf(a) === Object.getPrototypeOf(b) &&
      ownValue(a, 'message') === ownValue(b, 'message') &&
      ownValue(a, 'code') === ownValue(b, 'code') &&
      ownValue(a, 'cause') === ownValue(b, 'cause')
    )
  } catch {
    // A proxy's trap threw (instanceof reads the prototype too): not the same.
    return false
  }
}

function ownValue(error: Error, name: string): unknown {
  const descriptor = Object.getOwnPropertyDescriptor(error, name)
  return descriptor !== undefined && 'value' in descriptor ? descriptor.value : descriptor
}
