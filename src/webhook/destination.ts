import { Emitter } from '../core/emitter.js'
import { ClosedError } from '../core/errors/closed-error.js'
import { OptionsError } from '../core/errors/options-error.js'
import { parseRetryAfter } from '../core/retry-after.js'
import { MAX_TIMER_MS, setUnrefTimeout } from '../core/timers.js'
import type { WebhookEvent } from './event.js'
import { isEnabledFor } from './integrations.js'
import { Limiter } from './limiter.js'
import { toWebhookPayload } from './payload.js'
import { MemoryRetryStore } from './retry-store.js'
import { RetryScheduler } from './scheduler.js'
import { resolveWebhookSettings, type ResolvedWebhook, type ResolvedWebhookSettings, type WebhookSettings } from './settings.js'
import { importSigningKey, signWithKey } from './signature.js'
import type { WebhookTransport } from './transport.js'
import { WebhookError } from './webhook-error.js'

/** The fate of one event at one URL. `superseded`: another URL accepted the event first (mode `'any'`). */
export type WebhookUrlStatus = 'delivered' | 'failed' | 'superseded' | 'skipped'

/** What happened at one configured URL. */
export interface WebhookUrlResult {
  readonly url: string
  readonly status: WebhookUrlStatus
  /** Requests sent to this URL. */
  readonly attempts: number
  /** HTTP status of the last response, if any. */
  readonly lastStatus: number | undefined
  /** Why the last attempt failed, if it did. */
  readonly lastError: WebhookError | undefined
}

/** What `deliver()` resolves with once an event is processed, has finally failed, or was skipped. */
export interface DeliveryResult {
  /** `delivered`: accepted (by any URL in mode `'any'`, by every URL in mode `'each'`); `skipped`: `integrations` turned the destination off. */
  readonly status: 'delivered' | 'failed' | 'skipped'
  /** The event's `messageId`, or a generated UUID. */
  readonly eventId: string
  /** Rounds of requests made (a round sends to every URL still waiting). */
  readonly attempts: number
  readonly urls: readonly WebhookUrlResult[]
}

/** What `'retry'` listeners receive: a URL will be tried again at `retryAt`. */
export interface RetryNotice {
  readonly eventId: string
  readonly url: string
  /** Requests sent to this URL so far. */
  readonly attempts: number
  readonly error: WebhookError
  /** Epoch ms of the next attempt. */
  readonly retryAt: number
}

/** The events a {@link WebhookDestination} emits. */
export interface WebhookDestinationEvents {
  delivered: [result: DeliveryResult]
  failed: [result: DeliveryResult]
  skipped: [result: DeliveryResult]
  retry: [notice: RetryNotice]
}

/** Options of {@link WebhookDestination.close}. */
export interface WebhookCloseOptions {
  /** Longest wait for requests in flight, in ms. @defaultValue 10_000 */
  timeout?: number
}

interface Target {
  readonly webhook: ResolvedWebhook
  status: WebhookUrlStatus | 'pending'
  attempts: number
  lastStatus: number | undefined
  lastError: WebhookError | undefined
  retryAfterMs: number | undefined
}

interface Job {
  readonly eventId: string
  readonly body: Uint8Array
  readonly signature: string | undefined
  readonly deadline: number
  readonly targets: Target[]
  readonly resolve: (result: DeliveryResult) => void
  rounds: number
  dueAt: number
}

const encoder = new TextEncoder()

function isRetryableStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429
}

/**
 * Forwards each platform event as a signed JSON POST to up to five URLs, retrying timeouts,
 * network errors, 5xx, 408 and 429 for up to `retryWindowMs` (4 hours) from the first attempt.
 * One timer serves all pending retries, whatever their number.
 *
 * @example
 * ```ts
 * import { WebhookDestination } from 'eventwire/webhook'
 *
 * const destination = new WebhookDestination({
 *   webhooks: [{ url: 'https://hooks.example.com/in', headers: { 'X-Team': 'data' } }],
 *   sharedSecret: 's3cret',
 * })
 * const result = await destination.deliver({ type: 'track', userId: 'u1', event: 'Paid' })
 * console.log(result.status, result.urls)
 * await destination.close()
 * ```
 */
export class WebhookDestinationBase extends Emitter<WebhookDestinationEvents> {
  readonly #settings: ResolvedWebhookSettings
  readonly #transport: WebhookTransport
  readonly #key: Promise<CryptoKey> | undefined
  readonly #limiter: Limiter
  readonly #urlLimiters: Limiter[]
  readonly #scheduler = new RetryScheduler<Job>(new MemoryRetryStore<Job>(), (job) => this.#track(this.#round(job)))
  readonly #rounds = new Set<Promise<void>>()
  #closing: Promise<void> | undefined

  /**
   * @throws {@link OptionsError} naming the first setting it cannot use.
   */
  constructor(settings: WebhookSettings, defaultTransport: () => WebhookTransport) {
    super()
    this.#settings = resolveWebhookSettings(settings)
    const transport = (settings as { transport?: unknown }).transport
    if (transport !== undefined && (typeof transport !== 'object' || transport === null || typeof (transport as WebhookTransport).send !== 'function')) {
      throw new OptionsError('transport', 'expected an object with send(request).')
    }
    this.#transport = (transport as WebhookTransport | undefined) ?? defaultTransport()
    this.#key = this.#settings.sharedSecret === undefined ? undefined : importSigningKey(this.#settings.sharedSecret)
    this.#limiter = new Limiter(this.#settings.maxConcurrency)
    this.#urlLimiters = this.#settings.webhooks.map(() => new Limiter(this.#settings.maxConcurrencyPerUrl))
  }

  /** Events waiting for a retry. */
  get pendingRetries(): number {
    return this.#scheduler.size
  }

  /**
   * Sends one event to the configured URLs and resolves when it is processed, has finally failed,
   * or was skipped by its `integrations`. Retries happen inside: the promise can stay pending for up
   * to `retryWindowMs`.
   *
   * @throws {@link ValidationError} (as a rejection) for an event that cannot become a payload;
   * {@link ClosedError} after `close()`.
   */
  async deliver(event: WebhookEvent): Promise<DeliveryResult> {
    if (this.#closing) throw new ClosedError('deliver()')
    const payload = toWebhookPayload(event)
    const given = (event as { messageId?: unknown }).messageId
    const eventId = typeof given === 'string' && given !== '' ? given : crypto.randomUUID()
    if (!isEnabledFor((event as { integrations?: unknown }).integrations)) {
      const result = this.#result(eventId, 'skipped', 0, this.#settings.webhooks.map((webhook) => this.#target(webhook, 'skipped')))
      this.emit('skipped', result)
      return result
    }
    const body = encoder.encode(JSON.stringify(payload))
    const signature = this.#key ? await signWithKey(await this.#key, body) : undefined
    return new Promise<DeliveryResult>((resolve) => {
      const job: Job = {
        eventId,
        body,
        signature,
        deadline: Date.now() + this.#settings.retryWindowMs,
        targets: this.#settings.webhooks.map((webhook) => this.#target(webhook, 'pending')),
        resolve,
        rounds: 0,
        dueAt: 0,
      }
      this.#track(this.#round(job))
    })
  }

  /**
   * Refuses new events, reports events waiting for a retry as failed (`ERR_CLOSED`: the in-memory
   * store cannot keep them), waits up to `timeout` ms for requests in flight, and releases
   * connections. Safe to call more than once.
   */
  close(options: WebhookCloseOptions = {}): Promise<void> {
    const timeout = options.timeout ?? 10_000
    if (typeof timeout !== 'number' || Number.isNaN(timeout) || timeout < 0) {
      throw new OptionsError('timeout', `expected a number of ms >= 0, got ${String(timeout)}.`)
    }
    this.#closing ??= this.#shutdown(timeout)
    return this.#closing
  }

  #target(webhook: ResolvedWebhook, status: Target['status']): Target {
    return { webhook, status, attempts: 0, lastStatus: undefined, lastError: undefined, retryAfterMs: undefined }
  }

  #track(round: Promise<void>): void {
    this.#rounds.add(round)
    void round.finally(() => this.#rounds.delete(round))
  }

  /** Sends to every URL still waiting, then finishes the job or schedules its next round. */
  async #round(job: Job): Promise<void> {
    job.rounds++
    await Promise.all(job.targets.map((target, at) => (target.status === 'pending' ? this.#attempt(job, target, at) : undefined)))
    const pending = job.targets.filter((target) => target.status === 'pending')
    const delivered = job.targets.some((target) => target.status === 'delivered')
    if (pending.length === 0 || (delivered && this.#settings.mode === 'any')) {
      for (const target of pending) target.status = 'superseded'
      this.#finish(job)
      return
    }
    if (this.#closing) {
      this.#abandon(job)
      return
    }
    const now = Date.now()
    if (now >= job.deadline) {
      // The retry window is spent: each URL keeps its last error.
      for (const target of pending) target.status = 'failed'
      this.#finish(job)
      return
    }
    let delay = this.#settings.backoff(job.rounds - 1)
    for (const target of pending) delay = Math.max(delay, target.retryAfterMs ?? 0)
    job.dueAt = Math.min(now + Math.min(delay, MAX_TIMER_MS), job.deadline)
    for (const target of pending) {
      this.emit('retry', {
        eventId: job.eventId,
        url: target.webhook.url,
        attempts: target.attempts,
        error: target.lastError as WebhookError,
        retryAt: job.dueAt,
      })
    }
    this.#scheduler.schedule(job)
  }

  async #attempt(job: Job, target: Target, index: number): Promise<void> {
    const urlLimiter = this.#urlLimiters[index] as Limiter
    await urlLimiter.acquire()
    await this.#limiter.acquire()
    const { webhook } = target
    let response
    try {
      response = await this.#transport.send({
        url: webhook.url,
        origin: webhook.origin,
        path: webhook.path,
        headers: job.signature === undefined ? webhook.headers : { ...webhook.headers, 'x-signature': job.signature },
        body: job.body,
        timeoutMs: this.#settings.timeoutMs,
      })
    } finally {
      this.#limiter.release()
      urlLimiter.release()
    }
    target.attempts++
    target.retryAfterMs = undefined
    if (response.ok) {
      target.lastStatus = response.status
      if (response.status >= 200 && response.status < 300) {
        target.status = 'delivered'
        target.lastError = undefined
        return
      }
      const retryable = isRetryableStatus(response.status)
      target.lastError = new WebhookError(
        'ERR_HTTP_STATUS',
        webhook.url,
        `${webhook.url} answered HTTP ${response.status}; ${retryable ? 'will retry' : 'not retried (only timeouts, network errors, 5xx, 408 and 429 are)'}.`,
        { status: response.status },
      )
      if (retryable) target.retryAfterMs = parseRetryAfter(response.retryAfter, Date.now())
      else target.status = 'failed'
      return
    }
    const { failure, cause } = response
    if (failure === 'tls') {
      target.status = 'failed'
      target.lastError = new WebhookError(
        'ERR_TLS_CERTIFICATE',
        webhook.url,
        `${webhook.url} presented a certificate that is not trusted (self-signed, expired or for another host); no request was sent. Use a certificate from a public CA, or pass a transport that trusts your CA.`,
        { cause },
      )
      return
    }
    target.lastError =
      failure === 'timeout'
        ? new WebhookError('ERR_TIMEOUT', webhook.url, `${webhook.url} did not answer within ${this.#settings.timeoutMs} ms; will retry.`, { cause })
        : new WebhookError('ERR_NETWORK', webhook.url, `Could not reach ${webhook.url} (${describe(cause)}); will retry.`, { cause })
  }

  #finish(job: Job): void {
    const delivered =
      this.#settings.mode === 'any'
        ? job.targets.some((target) => target.status === 'delivered')
        : job.targets.every((target) => target.status === 'delivered')
    const result = this.#result(job.eventId, delivered ? 'delivered' : 'failed', job.rounds, job.targets)
    this.emit(delivered ? 'delivered' : 'failed', result)
    job.resolve(result)
  }

  #result(eventId: string, status: DeliveryResult['status'], attempts: number, targets: readonly Target[]): DeliveryResult {
    return {
      status,
      eventId,
      attempts,
      urls: targets.map((target) => ({
        url: target.webhook.url,
        status: target.status === 'pending' ? 'failed' : target.status,
        attempts: target.attempts,
        lastStatus: target.lastStatus,
        lastError: target.lastError,
      })),
    }
  }

  async #shutdown(timeout: number): Promise<void> {
    for (const job of this.#scheduler.stop()) this.#abandon(job)
    const settled = Promise.all(this.#rounds)
    let timer: ReturnType<typeof setTimeout> | undefined
    const expired = new Promise<false>((resolve) => {
      timer = setUnrefTimeout(() => resolve(false), Math.min(timeout, MAX_TIMER_MS))
    })
    const finished = await Promise.race([settled.then(() => true), expired])
    clearTimeout(timer)
    // Requests still in flight end within timeoutMs; connections are released after them.
    if (finished) await this.#transport.close?.()
    else void settled.then(() => this.#transport.close?.())
  }

  /** Reports an event that will not be retried because the destination is closing. */
  #abandon(job: Job): void {
    for (const target of job.targets) {
      if (target.status !== 'pending') continue
      target.status = 'failed'
      target.lastError = new WebhookError('ERR_CLOSED', target.webhook.url, 'The destination was closed before this event could be retried.', {
        cause: target.lastError,
      })
    }
    this.#finish(job)
  }
}

function describe(error: unknown): string {
  const cause = (error as { cause?: unknown } | null)?.cause
  const inner = cause instanceof Error ? `: ${cause.message}` : ''
  return error instanceof Error ? `${error.message}${inner}` : String(error)
}
