import { EventwireError } from '../../core/errors/eventwire-error.js'
import { conflictText } from '../delivery/destination-conflict-error.js'

/**
 * Thrown by `sources.set()` when `ifVersion` is not the stored version: another writer changed,
 * made or deleted the source since it was read. Nothing was written.
 *
 * @example
 * ```ts
 * import { SourceConflictError, WebhookQueue } from 'eventwire/webhook/bullmq'
 *
 * const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: 6379 } })
 * const read = await queue.sources.get('shop')
 * try {
 *   await queue.sources.set({ id: 'shop', writeKeyDigests: read?.writeKeyDigests, destinations: ['acme', 'beta'] }, { ifVersion: read?.version ?? 0 })
 * } catch (error) {
 *   if (error instanceof SourceConflictError) console.error(`changed meanwhile: now at version ${error.version}`)
 * }
 * ```
 */
export class SourceConflictError extends EventwireError<'ERR_SOURCE_CONFLICT'> {
  /** The source's id. */
  readonly source: string
  /** The version `ifVersion` asked for (0: none yet). */
  readonly expected: number
  /** The version the registry holds (0: none). */
  readonly version: number

  constructor(id: string, expected: number, version: number) {
    super('ERR_SOURCE_CONFLICT', conflictText('Source', id, expected, version))
    this.source = id
    this.expected = expected
    this.version = version
  }
}
