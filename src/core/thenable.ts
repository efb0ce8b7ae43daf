/**
 * Whether a value a user's function returned is a promise, of this realm or another, or any
 * thenable: what a synchronous caller cannot wait for. Its rejection, if any, is handled here, since
 * nobody else will wait for it (an unhandled rejection would end a Node process).
 */
export function isThenable(value: unknown): boolean {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false
  try {
    const then = (value as { then?: unknown }).then
    if (typeof then !== 'function') return false
    void Promise.resolve(value).catch(() => undefined)
    return true
  } catch {
    // A `then` getter that throws: not a thenable, and not a result either; the caller says so.
    return false
  }
}
