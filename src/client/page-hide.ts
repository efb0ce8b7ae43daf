interface PageHost {
  document?: unknown
  addEventListener?(type: string, listener: () => void): void
  removeEventListener?(type: string, listener: () => void): void
}

/** Browsers let `keepalive` requests outlive the page up to 64 KiB of bodies in all. */
export const KEEPALIVE_MAX_BYTES = 64_000

/**
 * Calls `onHide` when a browser page is being hidden or unloaded (`pagehide`, the event that also
 * fires on mobile and with the back-forward cache). Elsewhere (Node, Deno, Bun, Workers: no
 * `document`) it does nothing. Returns a function that stops listening.
 */
export function onPageHide(onHide: () => void): () => void {
  const host = globalThis as PageHost
  if (host.document === undefined || typeof host.addEventListener !== 'function') return () => {}
  host.addEventListener('pagehide', onHide)
  return () => host.removeEventListener?.('pagehide', onHide)
}
