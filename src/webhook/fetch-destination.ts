import { WebhookDestinationBase } from './destination.js'
import { createFetchTransport } from './fetch-transport.js'
import type { WebhookSettings } from './settings.js'
import { createWebCryptoSigner } from './signer.js'

/**
 * Forwards each platform event as a signed JSON POST to up to five URLs:
 * `Content-Type: application/json`, a `User-Agent` ending in `/1.0`, each URL's static headers,
 * and `X-Signature` when `sharedSecret` is set. Timeouts, network errors, 5xx, 408 and 429 are
 * retried for up to `retryWindowMs` (4 hours) from the first attempt; other statuses and
 * untrusted certificates fail at once.
 *
 * This build sends with `fetch` and signs with Web Crypto: browsers, Deno, Bun and Workers load
 * it. On Node, `eventwire/webhook` resolves to a build that sends with undici's `Pool`.
 *
 * @example
 * ```ts
 * import { WebhookDestination } from 'eventwire/webhook'
 *
 * const destination = new WebhookDestination({
 *   webhooks: [{ url: 'https://hooks.example.com/in', headers: { 'X-Team': 'data' } }],
 *   sharedSecret: 's3cret',
 * })
 * const result = await destination.deliver({ type: 'track', userId: 'u1', event: 'Paid' })
 * console.log(result.status, result.urls)
 * await destination.close()
 * ```
 */
export class WebhookDestination extends WebhookDestinationBase {
  /** @throws {@link OptionsError} naming the first setting it cannot use. */
  constructor(settings: WebhookSettings) {
    // fetch gives no hook into name resolution: blockPrivateNetworks checks literal addresses only here.
    super(settings, { transport: () => createFetchTransport(), signer: createWebCryptoSigner })
  }
}
