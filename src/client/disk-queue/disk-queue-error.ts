import { EventwireError } from '../../core/errors/eventwire-error.js'

/** Codes of {@link DiskQueueError}. */
export type DiskQueueErrorCode = 'ERR_QUEUE_LOCKED' | 'ERR_QUEUE_DIRECTORY'

/**
 * Thrown by `new DurableClient(...)` when its directory cannot be its queue:
 *
 * - `ERR_QUEUE_LOCKED`: another live process (or another client of this one) holds the directory.
 *   Two writers would send each other's messages twice and delete each other's files. Give each
 *   process its own directory, or stop the other first. A lock left by a process that ended (killed,
 *   crashed) is taken over: it never blocks a start.
 * - `ERR_QUEUE_DIRECTORY`: the directory cannot be made, read or written; `cause` is the system's
 *   error (`EACCES`, `ENOSPC`, `EROFS`...).
 *
 * @example
 * ```ts
 * import { DiskQueueError, DurableClient } from 'eventwire/disk-queue'
 *
 * try {
 *   const client = new DurableClient('WRITE_KEY', { disk: { directory: './analytics-queue' } })
 *   await client.close()
 * } catch (error) {
 *   if (error instanceof DiskQueueError && error.code === 'ERR_QUEUE_LOCKED') console.error(error.message)
 *   else throw error
 * }
 * ```
 */
export class DiskQueueError extends EventwireError<DiskQueueErrorCode> {
  /** The queue's directory, as given. */
  readonly directory: string

  constructor(code: DiskQueueErrorCode, directory: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options)
    this.directory = directory
  }
}
