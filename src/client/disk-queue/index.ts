/**
 * The analytics client with its queue on disk, for servers (Node, Deno and Bun): `DurableClient`
 * writes every accepted call to a directory before the call returns, and sends again at start what
 * the endpoint had not acknowledged. Not for browsers, which keep their page-exit store.
 *
 * @module eventwire/disk-queue
 */
export { DurableClient } from './durable-client.js'
export type { DiskQueueOptions, DiskRecovery, DurableClientOptions } from './durable-client.js'
export { DiskQueueError } from './disk-queue-error.js'
export type { DiskQueueErrorCode } from './disk-queue-error.js'
// What the client's own calls and options throw, as in `eventwire`.
export { OptionsError } from '../../core/errors/options-error.js'
export { ValidationError } from '../../core/errors/validation-error.js'
