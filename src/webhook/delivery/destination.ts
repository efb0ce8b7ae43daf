import { WebhookDestinationBase, type WebhookPlanOption } from './destination-base.js'
import type { NoPlan, TrackingPlan } from '../../core/plan.js'
import type { DestinationsSettings, WebhookSettings } from './settings.js'
// Resolved per runtime by package.json "imports": HTTP/1.1 on node:net and node:crypto on Node, fetch and Web Crypto elsewhere.
import { defaultPlatform } from '#eventwire/webhook-platform'

/**
 * Forwards each platform event as a signed JSON POST to up to five URLs:
 * `Content-Type: application/json`, a `User-Agent` ending in `/1.0`, each URL's static headers,
 * and `X-Signature` when `sharedSecret` is set. Timeouts, network errors, 5xx, 408 and 429 are
 * retried for up to `retryWindowMs` (4 hours) from the first attempt; other statuses and
 * untrusted certificates fail at once. A platform that serves many customers adds each one's URLs
 * and secrets to `destinations` and names one with each event (docs/destinations.md).
 *
 * On Node it sends with HTTP/1.1 of its own on `node:net` and signs with `node:crypto`; in
 * browsers, Deno, Bun and Workers it sends with `fetch` and signs with Web Crypto (there
 * `blockPrivateNetworks` can check literal addresses only: fetch gives no hook into name
 * resolution). The runtime picks the
 * platform (package.json "imports"); the API is the same.
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
export class WebhookDestination<Plan extends TrackingPlan | NoPlan = NoPlan> extends WebhookDestinationBase<Plan> {
  /**
   * @param settings - The URLs, the secret and the delivery rules; with `plan` (a `definePlan`),
   * events are checked by it and `deliver` is typed by it. Without `webhooks` (and so without
   * secrets or mode), it delivers only to the destinations of `destinations`.
   * @throws {@link OptionsError} naming the first setting it cannot use.
   */
  constructor(settings: (WebhookSettings | DestinationsSettings) & WebhookPlanOption<Plan>) {
    super(settings, defaultPlatform)
  }
}
