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

/** What a client does as its page goes away and comes back. */
export interface PageHandlers {
  /** The page is hidden (`visibilitychange`): it may never be shown again, or be killed while hidden. */
  hidden(): void
  /** The page is visible again (`visibilitychange`). */
  shown(): void
  /** The page is being left (`pagehide`): after this, no script of it runs unless it comes back. */
  leaving(): void
  /** The page came back from the back-forward cache (`pageshow` with `persisted`). */
  back(): void
}

/**
 * Calls `handlers` as a browser page is hidden, left, and shown again from the back-forward cache.
 * Returns a function that stops listening, or `undefined` outside a page (Node, Deno, Bun,
 * Workers, browser workers: no `document`).
 */
export function watchPage(handlers: PageHandlers): (() => void) | undefined {
  const host = globalThis as PageHost
  const { document } = host
  if (document === undefined || typeof host.addEventListener !== 'function') return undefined
  const onVisibility = () => {
    if (document.visibilityState === 'hidden') handlers.hidden()
    else handlers.shown()
  }
  const onHide = () => handlers.leaving()
  const onShow = (event: { persisted?: boolean }) => {
    if (event.persisted === true) handlers.back()
  }
  host.addEventListener('visibilitychange', onVisibility)
  host.addEventListener('pagehide', onHide)
  host.addEventListener('pageshow', onShow)
  return () => {
    host.removeEventListener?.('visibilitychange', onVisibility)
    host.removeEventListener?.('pagehide', onHide)
    host.removeEventListener?.('pageshow', onShow)
  }
}
