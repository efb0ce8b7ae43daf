import { Limiter } from '../delivery/limiter.js'
import type { ResolvedWebhook, ResolvedWebhookSettings } from '../delivery/settings.js'

/**
 * One configured URL with all that a request to it, and a report about it, need. Each delivery
 * target carries its endpoint, so that nothing is matched to its URL by position.
 */
export interface Endpoint extends ResolvedWebhook {
  /** Time one attempt may take, in ms: what each request carries, and what an `ERR_TIMEOUT` message names. */
  readonly timeoutMs: number
  /** Bounds the requests in flight to this URL (`maxConcurrencyPerUrl`), over every event. */
  readonly limiter: Limiter
}

/** The endpoints of the configured URLs, in the order configured. */
export function createEndpoints(settings: ResolvedWebhookSettings): Endpoint[] {
  return settings.webhooks.map((webhook) => ({
    ...webhook,
    timeoutMs: settings.timeoutMs,
    limiter: new Limiter(settings.maxConcurrencyPerUrl),
  }))
}
