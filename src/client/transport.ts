import type { SendFailure } from './delivery-error.js'
import type { ResolvedClientOptions } from './options.js'
import { USER_AGENT_HEADER } from '../core/version.js'

/** How one batch request ended, after every retry. */
export type SendResult = { readonly ok: true; readonly status: number; readonly attempts: number } | SendFailure

/** A batch body: its JSON, or the gzip bytes of it (sent with `Content-Encoding: gzip`). */
export type BatchBody = string | Uint8Array<ArrayBuffer>

/** How one attempt is made. */
export interface AttemptOptions {
  /** close()'s deadline: once it fires, the attempt ends at once. */
  readonly signal: AbortSignal
  /** Lets the request outlive the page (browsers cap such bodies at 64 KiB in all); ignored outside browsers. */
  readonly keepalive: boolean
}

/**
 * How one HTTP attempt ended, as a transport reports it: the status sorted by `statusVerdict`,
 * anything that is not an answer (a network error, the attempt's timeout, close()'s deadline) as
 * `retry` with no status, and `invalid` when the `fetch` option resolved something that is not a
 * `Response` (the code given is at fault, not the network: it is not retried).
 */
export type AttemptOutcome =
  | { readonly verdict: 'delivered'; readonly status: number }
  | {
      readonly verdict: 'reject'
      readonly status: number
      /** An error naming the status, the method and the URL. */
      readonly error: unknown
      /** The start of the response body (see `bodyExcerpt` in src/core/body-excerpt.ts). */
      readonly responseText: string | undefined
    }
  | {
      readonly verdict: 'retry'
      readonly status: number | undefined
      readonly retryAfter: string | null
      readonly error: unknown
    }
  | { readonly verdict: 'invalid'; readonly error: unknown }

/**
 * An attempt that got no answer (a network error, close(), or its deadline), worth another one.
 * At the deadline the error is the deadline's reason, a `TimeoutError` naming the limit, rather
 * than whatever the aborted request threw.
 */
export function noAnswer(
  error: unknown,
  deadline: { expired(): boolean; readonly signal: { readonly reason: unknown } },
): AttemptOutcome {
  return {
    verdict: 'retry',
    status: undefined,
    retryAfter: null,
    error: deadline.expired() ? deadline.signal.reason : error,
  }
}

/**
 * Makes HTTP attempts: one request per call, no retries (the client's retry loop, send-loop.ts,
 * runs above every transport), no page concerns beyond the `keepalive` flag.
 */
export interface BatchTransport {
  /** What sends the requests, for the debug log: `'fetch'` or `'http1'` (Node's stack). */
  readonly name: string
  /**
   * Sends one batch body once and sorts the answer. Never rejects, whatever the network or a
   * `fetch` of the user's does: the outcome is a value.
   */
  attempt(body: BatchBody, options: AttemptOptions): Promise<AttemptOutcome>
  /** Lets go of connections once the client is closed (nothing is sent after). Never rejects. */
  close?(): Promise<void>
}

/**
 * What a transport is made from: the client's resolved options, of which it reads those that
 * concern sending: the URL, the write key and where it goes, the attempt's time limit, and the
 * `fetch` and `proxy` options. The client passes its options as they are, with no object to build.
 */
export type TransportSettings = Pick<
  ResolvedClientOptions,
  'batchUrl' | 'writeKey' | 'writeKeyIn' | 'timeout' | 'fetch' | 'proxy' | 'maxConcurrentRequests'
>

/** Makes the transport of a client; each runtime has its own (`platform/`). */
export type TransportFactory = (settings: TransportSettings) => BatchTransport

function basicAuthorization(writeKey: string): string {
  const bytes = new TextEncoder().encode(`${writeKey}:`)
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return `Basic ${btoa(binary)}`
}

/**
 * The headers of a batch request, and the User-Agent where one may be set. With the write key
 * in the header: JSON, and the key as the Basic-auth user name. With the key in the body: only a
 * CORS-safelisted content type, so that browsers send the request without a preflight; the body is
 * the same JSON.
 */
function jsonHeaders({ writeKey, writeKeyIn }: TransportSettings): Readonly<Record<string, string>> {
  if (writeKeyIn === 'body') return { 'content-type': 'text/plain;charset=UTF-8', ...USER_AGENT_HEADER }
  return {
    'content-type': 'application/json',
    authorization: basicAuthorization(writeKey),
    ...USER_AGENT_HEADER,
  }
}

/**
 * The headers of a batch request by the kind of its body: {@link jsonHeaders}, with
 * `Content-Encoding: gzip` for a gzipped one.
 */
export function batchHeaders(settings: TransportSettings): (body: BatchBody) => Readonly<Record<string, string>> {
  const json = jsonHeaders(settings)
  const gzipped = { ...json, 'content-encoding': 'gzip' }
  return (body) => (typeof body === 'string' ? json : gzipped)
}
