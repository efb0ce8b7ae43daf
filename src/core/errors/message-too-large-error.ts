import { EventwireError } from './eventwire-error.js'

/**
 * Thrown synchronously by a call whose JSON is larger than the per-message limit. Nothing was queued.
 */
export class MessageTooLargeError extends EventwireError<'ERR_MESSAGE_TOO_LARGE'> {
  /** UTF-8 bytes of the message's JSON. */
  readonly bytes: number
  /** The limit it broke, in bytes. */
  readonly limit: number

  constructor(bytes: number, limit: number) {
    super(
      'ERR_MESSAGE_TOO_LARGE',
      `Message is ${bytes} bytes of JSON, over the ${limit}-byte limit per call; send less in properties, traits or context.`,
    )
    this.bytes = bytes
    this.limit = limit
  }
}
