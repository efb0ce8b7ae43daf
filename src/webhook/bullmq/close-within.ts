import { settlesWithin } from '../../core/timers.js'

/** A BullMQ queue or worker, as far as closing it goes. */
interface Closable {
  close(): Promise<void>
  disconnect(): Promise<void>
}

/**
 * Closes `closable` gracefully, or drops its connections once `ms` have passed: while Redis is
 * down a graceful close never finishes. BullMQ's disconnect waits for an 'end' that may not come
 * while reconnecting, so it is not awaited. What the close still says later goes to `failed`.
 */
export async function closeWithin(
  closable: Closable,
  ms: number,
  failed: (error: unknown) => void = () => undefined,
): Promise<void> {
  const closed = closable.close()
  closed.catch(failed)
  if (!(await settlesWithin(closed, ms))) closable.disconnect().catch(() => undefined)
}
