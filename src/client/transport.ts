import type { DeliveryErrorCode } from './delivery-error.js'
import type { ResolvedRetryOptions } from './options.js'
import { USER_AGENT_HEADER } from '../core/version.js'

/** How one batch request ended, after every retry. */
export type SendResult =
  | { readonly ok: true; readonly status: number; readonly attempts: number }
  | {
      readonly ok: false
      /**
       * In the client's words: `ERR_REJECTED`, a final status; `ERR_RETRIES_EXHAUSTED`, retryable
       * failures outlasted the budget; `ERR_CLOSE_TIMEOUT`, the signal (close()'s deadline) fired;
       * `ERR_PAGE_LEFT`, an attempt failed as the page was being left (see `SendOptions.leaving`).
       */
      readonly code: SendFailureCode
      readonly status: number | undefined
      readonly attempts: number
      /**
       * Why the batch failed. On `ERR_CLOSE_TIMEOUT`, why the attempt before the deadline failed
       * (the deadline itself says nothing of why the batch was still unsent), or `undefined`.
       */
      readonly error: unknown
      /** On `ERR_REJECTED`: the start of the response body, the server's own reason (see `bodyExcerpt` in src/core/body-excerpt.ts). */
      readonly responseText?: string | undefined
    }

/** The ways a send fails: every {@link DeliveryErrorCode} but the queue's own. */
export type SendFailureCode = Exclude<DeliveryErrorCode, 'ERR_QUEUE_FULL'>

/** Told before each retry of a batch. */
export type RetryListener = (attempt: number, error: unknown) => void

/** How one batch is sent. */
export interface SendOptions {
  /** close()'s deadline: once it fires, the batch ends with `ERR_CLOSE_TIMEOUT`. */
  readonly signal: AbortSignal
  readonly onRetry: RetryListener
  /** Lets the request outlive the page (browsers cap such bodies at 64 KiB in all); ignored outside browsers. */
  readonly keepalive: boolean
  /**
   * Where a batch waiting for its next attempt leaves a wake, for as long as it waits: calling it
   * ends the wait now. A browser page being left wakes them all, since no timer of it fires after.
   */
  readonly waking?: Set<() => void> | undefined
  /**
   * Whether the browser page is being left. A failed attempt is then not retried (the send ends
   * with `ERR_PAGE_LEFT`, for the client to keep the batch for the next page): the page's timers
   * may never fire, and the browser may already refuse keepalive requests.
   */
  readonly leaving?: (() => boolean) | undefined
}

/** A batch body: its JSON, or the gzip bytes of it (sent with `Content-Encoding: gzip`). */
export type BatchBody = string | Uint8Array<ArrayBuffer>

/** Sends batch bodies, retrying as configured. */
export interface BatchTransport {
  /** What sends the requests, for the debug log: `'fetch'` or `'undici'`. */
  readonly name: string
  /** Sends one batch body, the same bytes on every attempt. Never rejects: the outcome is a value. */
  send(body: BatchBody, options: SendOptions): Promise<SendResult>
  /** Lets go of connections once the client is closed (nothing is sent after). Never rejects. */
  close?(): Promise<void>
}

/** What a transport is made from: the client's resolved options that concern sending. */
export interface TransportSettings {
  /** `{endpoint}/v1/batch`. */
  readonly url: string
  readonly writeKey: string
  /** `'header'`: Basic auth and JSON; `'body'`: the key is in the body (the client's envelope), sent as plain text. */
  readonly writeKeyIn: 'header' | 'body'
  /** Time limit of one attempt, in ms: connecting, the response headers and its body together. */
  readonly timeout: number
  readonly retry: ResolvedRetryOptions
  /** The `fetch` option: when set, the client sends with it on every runtime. */
  readonly fetch: typeof fetch | undefined
}

/** Makes the transport of a client; each runtime has its own (`platform/`). */
export type TransportFactory = (settings: TransportSettings) => BatchTransport

/**
 * Bytes of a 2xx response body the client reads at most. A 2xx status is the endpoint's word that
 * it accepted the batch, so the body has nothing to add: the client reads a little of it (a small
 * body read to its end lets the connection be reused) and lets the rest go.
 */
export const RESPONSE_READ_BYTES = 64 * 1024

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
