import ky, { isHTTPError, type KyInstance } from 'ky'
import type { DeliveryErrorCode } from './delivery-error.js'
import { sleep } from '../core/timers.js'
import type { ResolvedRetryOptions } from './options.js'
import { abortable } from '../core/abortable.js'
import { bodyExcerpt } from '../core/body-excerpt.js'
import { readBodyStart } from '../core/read-body.js'
import { parseRetryAfter } from '../core/retry-after.js'
import { USER_AGENT_HEADER } from '../core/version.js'

/** How one batch request ended, after every retry. */
export type SendResult =
  | { readonly ok: true; readonly status: number; readonly attempts: number }
  | {
      readonly ok: false
      /**
       * In the client's words: `ERR_REJECTED`, a final status; `ERR_RETRIES_EXHAUSTED`, retryable
       * failures outlasted the budget; `ERR_CLOSE_TIMEOUT`, the signal (close()'s deadline) fired.
       */
      readonly code: SendFailureCode
      readonly status: number | undefined
      readonly attempts: number
      /**
       * Why the batch failed. On `ERR_CLOSE_TIMEOUT`, why the attempt before the deadline failed
       * (the deadline itself says nothing of why the batch was still unsent), or `undefined`.
       */
      readonly error: unknown
      /** On `ERR_REJECTED`: the start of the response body, the server's own reason (see {@link bodyExcerpt}). */
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
  /** Lets the request outlive the page (browsers cap such bodies at 64 KiB in all). */
  readonly keepalive: boolean
}

/** Sends one batch body, retrying as configured. Never rejects: the outcome is a value. */
export interface BatchTransport {
  send(body: string, options: SendOptions): Promise<SendResult>
}

/** Settings of {@link createKyTransport}. */
export interface KyTransportSettings {
  readonly url: string
  readonly writeKey: string
  readonly timeout: number
  readonly retry: ResolvedRetryOptions
  readonly fetch: typeof fetch | undefined
}

/**
 * Bytes of a 2xx response body the client reads at most. A 2xx status is the endpoint's word that
 * it accepted the batch, so the body has nothing to add: the client reads a little of it (a small
 * body read to its end lets the connection be reused) and lets the rest go.
 */
export const RESPONSE_READ_BYTES = 64 * 1024

/** Lets go of a response the client has no use for, so its connection is not held. */
function discard(response: Response): void {
  void response.body?.cancel().catch(() => undefined)
}

/** 408, 429 and every 5xx: worth another attempt. */
const RETRYABLE_STATUSES = [408, 429, ...Array.from({ length: 100 }, (_, index) => 500 + index)]

function basicAuthorization(writeKey: string): string {
  const bytes = new TextEncoder().encode(`${writeKey}:`)
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return `Basic ${btoa(binary)}`
}

/** Each delay is multiplied by a random factor in [JITTER_MIN, JITTER_MAX]. */
export const JITTER_MIN = 0.8
const JITTER_MAX = 1.2

function jitter(delay: number): number {
  return delay * (JITTER_MIN + Math.random() * (JITTER_MAX - JITTER_MIN))
}

/** Delay before retry number `retryNumber` (1-based), before jitter: doubling from `baseDelay`, capped at `maxDelay`. */
export function backoffDelay(retryNumber: number, retry: ResolvedRetryOptions): number {
  return Math.min(retry.maxDelay, retry.baseDelay * 2 ** (retryNumber - 1))
}

/**
 * The client's transport: ky over `fetch`, with ky's retry machinery. A 429 pauses every request
 * of this transport (new batches and retries alike) until its `Retry-After` has passed.
 */
export function createKyTransport(settings: KyTransportSettings): BatchTransport {
  const { retry } = settings
  const backoff = (retryNumber: number) => backoffDelay(retryNumber, retry)
  let pausedUntil = 0

  const api: KyInstance = ky.create({
    method: 'post',
    headers: {
      'content-type': 'application/json',
      authorization: basicAuthorization(settings.writeKey),
      ...USER_AGENT_HEADER,
    },
    timeout: settings.timeout,
    throwHttpErrors: true,
    // A followed 301-303 turns the POST into a GET without the batch, whose 2xx would count as
    // delivered; a 307 or 308 would resend the write key to wherever it points. A redirect is
    // answered like any other status >= 300: ERR_REJECTED (in browsers with status 0, an opaque
    // redirect), so the endpoint gets fixed.
    redirect: 'manual',
    ...(settings.fetch ? { fetch: settings.fetch } : {}),
    retry: {
      limit: retry.limit,
      methods: ['post'],
      statusCodes: RETRYABLE_STATUSES,
      afterStatusCodes: [429, 503],
      maxRetryAfter: retry.maxRetryAfter,
      delay: backoff,
      jitter,
      retryOnTimeout: true,
    },
    hooks: {
      beforeRequest: [
        async (request) => {
          const wait = pausedUntil - Date.now()
          if (wait > 0) await sleep(wait, request.signal)
        },
      ],
      beforeError: [
        (error, state) => {
          if (error.response.status === 429) {
            const asked = parseRetryAfter(error.response.headers.get('retry-after'), Date.now())
            const wait = Math.min(asked ?? backoff(state.retryCount + 1), retry.maxRetryAfter)
            pausedUntil = Math.max(pausedUntil, Date.now() + wait)
          }
          return error
        },
      ],
    },
  })

  return {
    async send(body, { signal, onRetry, keepalive }) {
      let attempts = 0
      let attemptStarted = 0
      let lastFailure: unknown
      // One attempt's timeout covers connect, headers and body together: ky times the first two,
      // the body is read within what is left.
      const timeLeft = () => settings.timeout - (Date.now() - attemptStarted)
      try {
        const sending = api(settings.url, {
          body,
          signal,
          ...(keepalive ? { keepalive } : {}),
          // Sees every failed attempt, network errors included (beforeError sees HTTP errors only);
          // `undefined` leaves the decision to the rules above.
          retry: {
            shouldRetry: ({ error }) => {
              lastFailure = error
              // A retried response's body goes unread; a final one's may be quoted (see below).
              if (isHTTPError(error) && RETRYABLE_STATUSES.includes(error.response.status)) discard(error.response)
              return undefined
            },
          },
          hooks: {
            beforeRequest: [
              () => {
                attempts++
                attemptStarted = Date.now()
              },
            ],
            beforeRetry: [({ error, retryCount }) => onRetry(retryCount, error)],
          },
        })
        const response = await abortable(sending, signal, discard)
        await readBodyStart(response, { maxBytes: RESPONSE_READ_BYTES, ms: timeLeft(), signal })
        return { ok: true, status: response.status, attempts }
      } catch (error) {
        const status = isHTTPError(error) ? error.response.status : undefined
        const code: SendFailureCode = signal.aborted
          ? 'ERR_CLOSE_TIMEOUT'
          : status !== undefined && !RETRYABLE_STATUSES.includes(status)
            ? 'ERR_REJECTED'
            : 'ERR_RETRIES_EXHAUSTED'
        if (code !== 'ERR_REJECTED') {
          if (isHTTPError(error)) discard(error.response)
          if (code === 'ERR_CLOSE_TIMEOUT') return { ok: false, code, status, attempts, error: lastFailure }
          return { ok: false, code, status, attempts, error }
        }
        // A refusal is final: what the server says about it is worth the rest of the attempt's time.
        const responseText = isHTTPError(error) ? await bodyExcerpt(error.response, timeLeft(), signal) : undefined
        return { ok: false, code, status, attempts, error, responseText }
      }
    },
  }
}
