import { EventwireError } from '../../core/errors/eventwire-error.js'

/** What a conflict in a registry met, in words: the cause, then the fix. `what` is `Destination` or `Source`. */
export function conflictText(what: string, id: string, expected: number, version: number): string {
  const name = `${what} ${JSON.stringify(id)}`
  if (expected === 0)
    return `${name} exists already, at version ${version}: ifVersion 0 writes only a new one. Read it (get()) and pass its version to change it.`
  if (version === 0)
    return `${name} is not in the registry, so not at version ${expected}: it was deleted, or never set. Set it without ifVersion, or with ifVersion 0, to make it.`
  return `${name} is at version ${version}, not ${expected}: someone changed it meanwhile. Read it again (get()) and apply your change to what it holds now.`
}

/**
 * Thrown by `destinations.set()` (BullMQ's registry or the in-memory one) when `ifVersion` is not
 * the stored version: another writer changed, made or deleted the destination since it was read.
 * Nothing was written.
 *
 * @example
 * ```ts
 * import { DestinationConflictError, WebhookQueue } from 'eventwire/webhook/bullmq'
 *
 * const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: 6379 } })
 * const read = await queue.destinations.get('acme')
 * try {
 *   await queue.destinations.set({ id: 'acme', webhooks: [{ url: 'https://acme.example/in' }] }, { ifVersion: read?.version ?? 0 })
 * } catch (error) {
 *   if (error instanceof DestinationConflictError) console.error(`changed meanwhile: now at version ${error.version}`)
 * }
 * ```
 */
export class DestinationConflictError extends EventwireError<'ERR_DESTINATION_CONFLICT'> {
  /** The destination's id. */
  readonly destination: string
  /** The version `ifVersion` asked for (0: none yet). */
  readonly expected: number
  /** The version the registry holds (0: none). */
  readonly version: number

  constructor(id: string, expected: number, version: number) {
    super('ERR_DESTINATION_CONFLICT', conflictText('Destination', id, expected, version))
    this.destination = id
    this.expected = expected
    this.version = version
  }
}
