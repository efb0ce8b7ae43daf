import { MAX_BATCH_BYTES } from '../core/limits.js'
import type { MessageCallback } from './batch.js'
import type { MessageRecord } from './delivery-error.js'
import type { UnsentStore } from './page-store.js'
import type { RetryWaits } from './send-loop.js'

interface PageHost {
  document?: { visibilityState?: string }
  addEventListener?(type: string, listener: (event: { persisted?: boolean }) => void): void
  removeEventListener?(type: string, listener: (event: { persisted?: boolean }) => void): void
}

/**
 * Bytes of request bodies a page may have in flight with `keepalive` at once: browsers refuse a
 * keepalive request that would take the bodies of those in flight past 64 KiB (65,536 bytes),
 * and `navigator.sendBeacon` counts against the same quota. A little under it, for safety.
 */
export const KEEPALIVE_BUDGET = 64_000

/** What the client does when its page tells it to. */
export interface PageClient {
  /** The page is hidden: send what is queued now, as far as the keepalive budget goes. */
  sendQueued(): void
  /** The page is being left: send what the budget carries now, and keep or report the rest. */
  leave(): void
  /** The page came back from the back-forward cache: take back what it kept. */
  takeKept(): void
}

/** A message kept for the next page, with its call's callback when this very page kept it. */
export interface KeptMessage extends MessageRecord {
  readonly callback?: MessageCallback | undefined
}

/**
 * What the client asks of the page it runs in, wherever it runs: a {@link PageKeepalive} watching
 * a browser page, or {@link NO_PAGE} everywhere else. The client's sending and settling code is
 * the same for both.
 */
export interface PageLifecycle {
  /** Whether requests go with `keepalive`, so that they outlive the page. */
  readonly keepalive: boolean
  /** Whether the page is being left: calls are sent or kept at once, bodies go uncompressed. */
  readonly left: boolean
  /** The largest batch body that may start now: what the keepalive budget has left, or 500 KB. */
  room(): number
  /** A batch body of `bytes` starts holding the budget. */
  hold(bytes: number): void
  /** `bytes` of the budget are free again. Returns whether the page is hidden or being left: what is queued may go now. */
  release(bytes: number): boolean
  /** How one batch waits between its attempts (see {@link RetryWaits}): one per batch sent. */
  retryWaits(): RetryWaits
  /** A compression that the page being left cuts short (`cut` sends the JSON instead); returns what ends that. */
  whileCompressing(cut: () => void): () => void
  /** Keeps messages for the next page (or this one, back from the back-forward cache); returns how many it kept. */
  keep(messages: readonly KeptMessage[]): number
  /** Takes what pages of this origin kept, with the callbacks of those this page kept itself. */
  take(): KeptMessage[]
  /** Stops listening to the page (close()). */
  stop(): void
}

/**
 * A client's browser page: every batch goes with `keepalive` within the browser's budget, and the
 * page going away sends what is queued (hidden) or sends and keeps it (left). A wait before a
 * retry ends early when the page is hidden, once per batch, and when it is left, since no timer
 * of the page may fire after; never before the server's `Retry-After` is over.
 *
 * Made without a page ({@link NO_PAGE}), it is the no-op variant: nothing to listen to, so no wait
 * ends early, nothing is kept, and a batch may take 500 KB.
 */
export class PageKeepalive implements PageLifecycle {
  readonly keepalive: boolean
  /**
   * `'hidden'`: what is queued goes as soon as the budget has room for it. `'left'`: the same, and
   * bodies go uncompressed, since a compression may not end before the page does.
   */
  #state: 'visible' | 'hidden' | 'left' = 'visible'
  /** Bodies of the batches in flight, all sent with `keepalive`: what the browser's quota holds. */
  #inFlight = 0
  /** Wakes of batches waiting for a retry, each told whether the page is being left. */
  readonly #waiting = new Set<(leaving: boolean) => void>()
  /** Of batches being compressed: sends one uncompressed now instead. */
  readonly #compressing = new Set<() => void>()
  /**
   * Callbacks of the messages this page kept, by `messageId`: if the page comes back from the
   * back-forward cache and sends them, their callbacks run; if it is gone, they go with it.
   */
  readonly #callbacks = new Map<string, MessageCallback>()
  readonly #stop: () => void
  readonly #store: UnsentStore | undefined

  /**
   * @param host - The page's window (it has a `document` and `addEventListener`); none: {@link NO_PAGE}.
   * @param client - What the page going and coming back asks of the client.
   * @param store - Where what the budget cannot carry is kept as the page is left; none without storage.
   */
  constructor(host?: PageHost, client?: PageClient, store?: UnsentStore) {
    this.#store = store
    this.keepalive = client !== undefined
    if (host === undefined || client === undefined) {
      this.#stop = () => undefined
      return
    }
    const onVisibility = () => {
      if (host.document?.visibilityState !== 'hidden') {
        this.#state = 'visible'
        return
      }
      // A page being left stays so until it is shown again: browsers fire visibilitychange
      // (hidden) after pagehide.
      if (this.#state === 'visible') this.#state = 'hidden'
      this.#wake(false)
      client.sendQueued()
    }
    const onHide = () => {
      // Batches being compressed go as they are, within what they hold of the budget already.
      for (const cut of this.#compressing) cut()
      this.#state = 'left'
      this.#wake(true)
      client.leave()
    }
    const onShow = (event: { persisted?: boolean }) => {
      if (event.persisted !== true) return
      this.#state = 'visible'
      client.takeKept()
    }
    const listeners = { visibilitychange: onVisibility, pagehide: onHide, pageshow: onShow }
    for (const [type, listener] of Object.entries(listeners)) host.addEventListener?.(type, listener)
    this.#stop = () => {
      for (const [type, listener] of Object.entries(listeners)) host.removeEventListener?.(type, listener)
    }
  }

  get left(): boolean {
    return this.#state === 'left'
  }

  room(): number {
    return this.keepalive ? KEEPALIVE_BUDGET - this.#inFlight : MAX_BATCH_BYTES
  }

  hold(bytes: number): void {
    this.#inFlight += bytes
  }

  release(bytes: number): boolean {
    this.#inFlight -= bytes
    return this.#state !== 'visible'
  }

  retryWaits(): RetryWaits {
    // Whether this batch has had its early attempt: tab switches during an outage must not spend its budget.
    let woken = false
    return {
      leaving: () => this.left,
      wait: (ms, asked, signal) =>
        new Promise((resolve, reject) => {
          const serverUntil = Date.now() + asked
          // `true`: retry now; `false`: the page is being left within the server's wait; none: close()'s deadline.
          const settle = (retry?: boolean) => {
            clearTimeout(timer)
            signal.removeEventListener('abort', onAbort)
            this.#waiting.delete(wake)
            if (retry === undefined) reject(signal.reason)
            else resolve(retry)
          }
          const onAbort = () => settle()
          const wake = (leaving: boolean) => {
            // The server's wait is never cut short: as the page is left, the batch is kept instead.
            if (Date.now() < serverUntil) {
              if (leaving) settle(false)
            } else if (leaving || !woken) {
              // Hidden: one early attempt per batch. Left: the last chance the page has to send it.
              woken = true
              settle(true)
            }
          }
          const timer = setTimeout(settle, ms, true)
          signal.addEventListener('abort', onAbort)
          this.#waiting.add(wake)
          // An aborted signal fires no more events.
          if (signal.aborted) onAbort()
        }),
    }
  }

  whileCompressing(cut: () => void): () => void {
    this.#compressing.add(cut)
    return () => this.#compressing.delete(cut)
  }

  keep(messages: readonly KeptMessage[]): number {
    const kept = this.#store?.keep(messages) ?? 0
    // Stryker disable next-line MethodExpression: callbacks of messages not kept would only take memory; take() gives back what the store kept.
    for (const { messageId, callback } of messages.slice(0, kept)) {
      if (callback) this.#callbacks.set(messageId, callback)
    }
    return kept
  }

  take(): KeptMessage[] {
    return (this.#store?.take() ?? []).map((record) => {
      const callback = this.#callbacks.get(record.messageId)
      this.#callbacks.delete(record.messageId)
      return { ...record, callback }
    })
  }

  stop(): void {
    this.#stop()
  }

  #wake(leaving: boolean): void {
    for (const wake of this.#waiting) wake(leaving)
  }
}

/** The page of a client that has none (Node, Deno, Bun, Workers, or `flushOnPageHide: false`). */
export const NO_PAGE: PageLifecycle = new PageKeepalive()

/**
 * The page a client runs in: a {@link PageKeepalive} in a browser page (a `document` and window
 * events), {@link NO_PAGE} elsewhere (Node, Deno, Bun, Workers, browser workers). `store` is
 * called only in a page.
 */
export function pageLifecycle(client: PageClient, store: () => UnsentStore | undefined): PageLifecycle {
  const host = globalThis as PageHost
  if (host.document === undefined || typeof host.addEventListener !== 'function') return NO_PAGE
  return new PageKeepalive(host, client, store())
}
