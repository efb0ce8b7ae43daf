import { EventwireError } from '../../core/errors/eventwire-error.js'

/**
 * Thrown (as a rejection of `WebhookQueue.enqueue()`, `enqueueBulk()` or, in memory,
 * `WebhookDestination.deliver()`) for a destination id the registry does not hold, or holds in a
 * form eventwire cannot read: the event was not taken. Add the destination first (`destinations.set()`).
 *
 * @example
 * ```ts
 * import { UnknownDestinationError, WebhookQueue } from 'eventwire/webhook/bullmq'
 *
 * const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: 6379 } })
 * try {
 *   await queue.enqueue({ type: 'track', userId: 'u1', event: 'Paid' }, { destination: 'acme' })
 * } catch (error) {
 *   if (error instanceof UnknownDestinationError) console.error(`no destination ${error.destination}`)
 * }
 * ```
 */
export class UnknownDestinationError extends EventwireError<'ERR_UNKNOWN_DESTINATION'> {
  /** The id that was given. */
  readonly destination: string

  constructor(destination: string, problem?: string) {
    super(
      'ERR_UNKNOWN_DESTINATION',
      problem === undefined
        ? `No destination ${JSON.stringify(destination)} in the registry: the event was not taken. Add it first with destinations.set(), or check the id.`
        : `Destination ${JSON.stringify(destination)} in the registry cannot be read: ${problem}. The event was not taken; set the destination again.`,
    )
    this.destination = destination
  }
}
