import type { Logger } from '../core/debug.js'

/** What the exit watch reads of a client: the messages it holds (queued, in flight or retrying). */
export interface HoldsMessages {
  readonly pending: number
}

/**
 * Watches for the end of the process the client runs in, where a runtime has one to watch (Node),
 * and then logs through `logger` what `client` still holds. The watch holds the client weakly, so
 * a client nobody references any more is not kept alive by it.
 */
export type WatchExit = (client: HoldsMessages, logger: Logger) => void

/** The line logged when a process ends with messages still held. */
export function lostAtExitLine(held: number): string {
  const lost =
    held === 1
      ? '1 message still queued or in flight at exit was'
      : `${held} messages still queued or in flight at exit were`
  return `${lost} lost: await client.close() before the process ends.`
}
