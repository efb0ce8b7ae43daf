import { Limiter } from './limiter.js'
import type { ResolvedWebhookSettings } from './settings.js'
import type { WebhookResponse, WebhookTransport } from './transport.js'

/** Sends prepared bytes to the n-th configured URL, within the concurrency bounds. */
export type Sender = (index: number, body: Uint8Array, signature: string | undefined) => Promise<WebhookResponse>

/** A {@link Sender} over a transport, bounded overall and per URL, in arrival order. */
export function createSender(settings: ResolvedWebhookSettings, transport: WebhookTransport): Sender {
  const overall = new Limiter(settings.maxConcurrency)
  const perUrl = settings.webhooks.map(() => new Limiter(settings.maxConcurrencyPerUrl))
  return async (index, body, signature) => {
    const webhook = settings.webhooks[index]
    const limiter = perUrl[index]
    if (!webhook || !limiter) throw new RangeError(`no webhook at index ${index}`)
    await limiter.acquire()
    await overall.acquire()
    try {
      return await transport.send({
        url: webhook.url,
        origin: webhook.origin,
        path: webhook.path,
        headers: signature === undefined ? webhook.headers : { ...webhook.headers, 'x-signature': signature },
        body,
        timeoutMs: settings.timeoutMs,
      })
    } finally {
      overall.release()
      limiter.release()
    }
  }
}
