import type { WebhookEvent } from './event.js'
import { toWebhookPayload } from './payload.js'
import type { Outgoing } from './sender.js'
import type { Signer } from './signer.js'

/** An event turned into the bytes to send, once, and their signature. */
export type PreparedEvent = Outgoing

/** The event's `messageId`, or a new UUID: the id results and notices carry. */
export function eventIdOf<Data extends object>(event: WebhookEvent<Data>): string {
  const given = (event as { messageId?: unknown }).messageId
  return typeof given === 'string' && given !== '' ? given : crypto.randomUUID()
}

/**
 * Builds the payload, serializes it once and signs those exact bytes.
 *
 * @throws {@link ValidationError} for an event that cannot become a payload.
 */
export function prepareEvent<Data extends object>(event: WebhookEvent<Data>, eventId: string, sign: Signer | undefined): PreparedEvent | Promise<PreparedEvent> {
  // A string, not bytes: JSON.stringify's output is well-formed UTF-16, so its UTF-8 encoding (what
  // the signer hashes and the transport sends) is one and the same, and no buffer is allocated per event.
  const body = JSON.stringify(toWebhookPayload(event))
  const signature = sign?.(body)
  // A synchronous signer (node:crypto) needs no tick; Web Crypto's does.
  return typeof signature === 'object' ? signature.then((value) => ({ eventId, body, signature: value })) : { eventId, body, signature }
}
