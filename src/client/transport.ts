import ky, { isHTTPError, type KyInstance } from 'ky'
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
      /** `rejected`: a final status; `exhausted`: retryable failures outlasted the budget; `aborted`: the signal fired. */
      readonly reason: 'rejected' | 'exhausted' | 'aborted'
      readonly status: number | undefined
      readonly attempts: number
      /**
       * Why the batch failed. When `aborted`, why the attempt before the abort failed (the abort
       * itself says nothing of why the batch was still unsent), or `undefined` when none had.
       */
      readonly error: unknown
      /** When `rejected`: the start of the response body, the server's own reason (see {@link bodyExcerpt}). */
      readonly responseText?: string | undefined
    }

/** Told before each retry of a batch. */
export type RetryListener = (attempt: number, error: unknown) => void

/** Sends one batch body, retrying as configured. Never rejects: the outcome is a value. */
export interface BatchTransport {
  /** `keepalive` lets the request outlive the page (browsers cap such bodies at 64 KiB in all). */
  send(body: string, signal: AbortSignal, onRetry: RetryListener, keepalive: boolean): Promise<SendResult>
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
    async send(body, signal, onRetry, keepalive) {
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
        const reason = signal.aborted
          ? 'aborted'
          : status !== undefined && !RETRYABLE_STATUSES.includes(status)
            ? 'rejected'
            : 'exhausted'
        if (reason !== 'rejected') {
          if (isHTTPError(error)) discard(error.response)
          if (reason === 'aborted') return { ok: false, reason, status, attempts, error: lastFailure }
          return { ok: false, reason, status, attempts, error }
        }
        // A refusal is final: what the server says about it is worth the rest of the attempt's time.
        const responseText = isHTTPError(error) ? await bodyExcerpt(error.response, timeLeft(), signal) : undefined
        return { ok: false, reason, status, attempts, error, responseText }
      }
    },
  }
}
