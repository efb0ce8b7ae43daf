import type { Signer } from '../signing/signer.js'
import {
  keepsPromise,
  type TransportFailure,
  type WebhookRequest,
  type WebhookResponse,
  type WebhookTransport,
} from '../network/transport.js'

// The engine calls functions it does not own: the `backoff` setting, a transport, a platform's
// signer. Each is called here, and whatever it does (throw, reject, return garbage, never answer)
// comes back as a value the engine knows how to report, so no delivery is stranded and no
// rejection goes unhandled.

/** A user callback that broke its contract: what it threw, or an error naming what it returned. */
export interface CallbackFailure {
  readonly cause: unknown
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined)
    return String(value)
  if (typeof value === 'bigint') return `${value}n`
  // Only typeof: reading anything of a proxy could throw again.
  return `a value of type ${typeof value}`
}

/**
 * The delay before retry number `attempt`, or why there is none: the backoff threw, or returned
 * something other than a finite number of ms >= 0 (`undefined` from a lookup table that ran out,
 * `NaN`, a negative number, `Infinity`).
 */
export function backoffDelay(backoff: (attempt: number) => number, attempt: number): number | CallbackFailure {
  let delay: unknown
  try {
    delay = backoff(attempt)
  } catch (cause) {
    return { cause }
  }
  if (typeof delay === 'number' && Number.isFinite(delay) && delay >= 0) return delay
  const kind = typeof delay === 'number' ? RangeError : TypeError
  return {
    cause: new kind(`backoff(${attempt}) returned ${describeValue(delay)}; expected a finite number of ms >= 0.`),
  }
}

/**
 * Visible ASCII words separated by single spaces: what a header value may safely carry, and what
 * a list of signatures needs.
 */
const SIGNATURE = /^[\x21-\x7e]+(?: [\x21-\x7e]+)*$/

function checkSignature(signature: unknown): string | CallbackFailure {
  if (typeof signature === 'string' && SIGNATURE.test(signature)) return signature
  return {
    cause: new TypeError(
      `the signer returned ${describeValue(signature)}; expected a non-empty string of visible ASCII (the HMAC).`,
    ),
  }
}

/**
 * Signs a body, or says why it could not: the signer threw, rejected, returned something that
 * cannot be a header value, or did not answer within `timeoutMs`. A synchronous signer (node:crypto)
 * costs no tick and no timer.
 */
export function signBody(
  sign: Signer,
  body: string,
  timeoutMs: number,
): string | CallbackFailure | Promise<string | CallbackFailure> {
  let signature: string | Promise<string>
  try {
    signature = sign(body)
  } catch (cause) {
    return { cause }
  }
  if (typeof signature === 'string') return checkSignature(signature)
  const late = new Error(`the signer did not answer within ${timeoutMs} ms (timeoutMs).`)
  return withDeadline(
    Promise.resolve(signature).then(checkSignature, (cause: unknown) => ({ cause })),
    timeoutMs,
    () => ({ cause: late }),
  )
}

const FAILURES: ReadonlySet<string> = new Set<TransportFailure>(['timeout', 'network', 'tls', 'blocked', 'proxy'])

/**
 * A transport's answer as a fresh {@link WebhookResponse}, each field read once (a getter cannot
 * change it later), or `undefined` when it is not one. A missing `retryAfter` reads as `null`.
 */
function readResponse(value: unknown): WebhookResponse | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const { ok, status, retryAfter, failure, cause } = value as Record<string, unknown>
  if (ok === false)
    return typeof failure === 'string' && FAILURES.has(failure)
      ? { ok, failure: failure as TransportFailure, cause }
      : undefined
  const validStatus = typeof status === 'number' && Number.isInteger(status) && status >= 100 && status <= 999
  if (ok !== true || !validStatus || (retryAfter != null && typeof retryAfter !== 'string')) return undefined
  return { ok, status, retryAfter: retryAfter ?? null }
}

/**
 * Sends one request through a transport, which may be the user's (one of eventwire's own that
 * keeps its promise, see `keepsItsPromise`, is sent through as it is): a throw or a rejection is a
 * network failure with the thrown value as `cause` (retried as network errors are), an answer that
 * is not a {@link WebhookResponse} is a network failure naming it, and a transport that has not
 * answered within the request's `timeoutMs` is a timeout: the engine does not take the transport's
 * word that it enforces the timeout.
 */
export function sendThrough(transport: WebhookTransport, request: WebhookRequest): Promise<WebhookResponse> {
  if (keepsPromise(transport)) return transport.send(request)
  let answer: Promise<WebhookResponse>
  try {
    answer = transport.send(request)
  } catch (cause) {
    return Promise.resolve({ ok: false, failure: 'network', cause })
  }
  const checked = Promise.resolve(answer)
    .then(
      (value): WebhookResponse =>
        readResponse(value) ?? {
          ok: false,
          failure: 'network',
          cause: new TypeError(
            `transport.send() resolved ${describeValue(value)}, not a WebhookResponse ({ ok: true, status, retryAfter } or { ok: false, failure, cause }).`,
          ),
        },
    )
    // A rejection, or a getter of the answer that threw.
    .catch((cause: unknown): WebhookResponse => ({ ok: false, failure: 'network', cause }))
  return withDeadline(checked, request.timeoutMs, () => {
    const cause = new Error(`transport.send() did not settle within ${request.timeoutMs} ms (timeoutMs).`)
    cause.name = 'TimeoutError'
    return { ok: false, failure: 'timeout', cause }
  })
}

/**
 * `work`'s value, or `late()`'s once `ms` have passed. `work` never rejects here (the callers turn
 * rejections into values), so the one left behind cannot become an unhandled rejection.
 */
function withDeadline<T>(work: Promise<T>, ms: number, late: () => T): Promise<T> {
  return new Promise((resolve) => {
    // Not unref'd: an awaited deliver() keeps the process alive until it settles, whatever the transport holds.
    const timer = setTimeout(() => resolve(late()), ms)
    void work.then((value) => {
      clearTimeout(timer)
      resolve(value)
    })
  })
}
