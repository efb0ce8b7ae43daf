import { sendThrough } from './callbacks.js'
import { Limiter } from './limiter.js'
import type { ResolvedWebhookSettings } from './settings.js'
import type { WebhookResponse, WebhookTransport } from './transport.js'

/** What every attempt of one event carries. */
export interface Outgoing {
  readonly eventId: string
  /** The JSON body, serialized once; its UTF-8 encoding is what is signed and sent. */
  readonly body: string
  readonly signature: string | undefined
}

/** The header carrying the event's stable id, the same on every attempt: receivers de-duplicate on it. */
export const EVENT_ID_HEADER = 'webhook-id'

/** Sends an event's bytes to the n-th configured URL, within the concurrency bounds. */
export type Sender = (index: number, outgoing: Outgoing) => Promise<WebhookResponse>

/**
 * A {@link Sender} over a transport, bounded overall and per URL, in arrival order. The in-memory
 * destination admits rounds within `maxConcurrency` before they get here, so there the overall
 * bound rarely queues; the BullMQ worker relies on it.
 */
export function createSender(settings: ResolvedWebhookSettings, transport: WebhookTransport): Sender {
  const overall = new Limiter(settings.maxConcurrency)
  const perUrl = settings.webhooks.map(() => new Limiter(settings.maxConcurrencyPerUrl))
  return async (index, { eventId, body, signature }) => {
    const webhook = settings.webhooks[index]
    const limiter = perUrl[index]
    if (!webhook || !limiter) throw new RangeError(`no webhook at index ${index}`)
    // acquire() gives a promise only when there is a wait: a free slot costs no tick.
    const urlPlace = limiter.acquire()
    if (urlPlace !== undefined) await urlPlace
    const place = overall.acquire()
    if (place !== undefined) await place
    try {
      return await sendThrough(transport, {
        url: webhook.url,
        origin: webhook.origin,
        path: webhook.path,
        // Literal keys (not [EVENT_ID_HEADER]) keep this a fast object clone.
        headers:
          signature === undefined
            ? { ...webhook.headers, 'webhook-id': eventId }
            : { ...webhook.headers, 'webhook-id': eventId, 'x-signature': signature },
        body,
        timeoutMs: settings.timeoutMs,
        blockPrivateNetworks: settings.blockPrivateNetworks,
      })
    } finally {
      overall.release()
      limiter.release()
    }
  }
}
