import type { WebhookEvent } from './event.js'
import { toWebhookPayload } from './payload.js'
import type { Outgoing } from './sender.js'
import type { Signer } from './signer.js'

/** An event turned into the bytes to send, once, and their signature. */
export type PreparedEvent = Outgoing

const encoder = new TextEncoder()

/** The event's `messageId`, or a new UUID: the id results and notices carry. */
export function eventIdOf(event: WebhookEvent): string {
  const given = (event as { messageId?: unknown }).messageId
  return typeof given === 'string' && given !== '' ? given : crypto.randomUUID()
}

/**
 * Builds the payload, serializes it once and signs those exact bytes.
 *
 * @throws {@link ValidationError} for an event that cannot become a payload.
 */
export async function prepareEvent(event: WebhookEvent, eventId: string, sign: Signer | undefined): Promise<PreparedEvent> {
  const body = encoder.encode(JSON.stringify(toWebhookPayload(event)))
  return { eventId, body, signature: sign ? await sign(body) : undefined }
}
