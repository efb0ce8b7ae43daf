import { Limiter } from '../../core/limiter.js'

/** A configured URL, parsed once. */
export interface ResolvedWebhook {
  readonly url: string
  readonly origin: string
  /** Path and query, as entered. */
  readonly path: string
  /** Header name/value pairs every request to this URL carries, signature aside. */
  readonly headers: Readonly<Record<string, string>>
}

/**
 * One configured URL with all that a request to it, and a report about it, need. Each delivery
 * target carries its endpoint, so that nothing is matched to its URL by position.
 */
export interface Endpoint extends ResolvedWebhook {
  /** Time one attempt may take, in ms: what each request carries, and what an `ERR_TIMEOUT` message names. */
  readonly timeoutMs: number
  /** Bounds the requests in flight to this URL (`maxConcurrencyPerUrl`), over every event. */
  readonly limiter: Limiter
  /**
   * The headers of every request to this URL, in order, with the per-request ones present and
   * empty: a request's headers are a copy of one of these with the empty values filled in. (V8
   * copies an object with all its properties in some 20 ns; a spread followed by new properties
   * took 1.5 µs per request.)
   */
  readonly headerShapes: HeaderShapes
}

/** {@link Endpoint.headerShapes}: one per combination of signatures a request can carry. */
export interface HeaderShapes {
  readonly unsigned: Readonly<Record<string, string>>
  /** With `x-signature`. */
  readonly signed: Readonly<Record<string, string>>
  /** With Standard Webhooks' `webhook-timestamp` and `webhook-signature`. */
  readonly standard: Readonly<Record<string, string>>
  /** With both schemes. */
  readonly both: Readonly<Record<string, string>>
}

export function headerShapesOf(headers: Readonly<Record<string, string>>): HeaderShapes {
  const standard = { 'webhook-id': '', 'webhook-timestamp': '', 'webhook-signature': '' }
  return {
    unsigned: { ...headers, 'webhook-id': '' },
    signed: { ...headers, 'webhook-id': '', 'x-signature': '' },
    standard: { ...headers, ...standard },
    both: { ...headers, ...standard, 'x-signature': '' },
  }
}

/** What {@link createEndpoints} reads of the resolved settings. */
export interface EndpointSettings {
  readonly webhooks: readonly ResolvedWebhook[]
  readonly timeoutMs: number
  readonly maxConcurrencyPerUrl: number
}

/**
 * The endpoints of the configured URLs, in the order configured. `limiterFor` gives a URL's
 * limiter: one per URL, shared by every destination that lists it.
 */
export function createEndpoints(settings: EndpointSettings, limiterFor: (url: string) => Limiter): Endpoint[] {
  return settings.webhooks.map((webhook) => ({
    ...webhook,
    timeoutMs: settings.timeoutMs,
    limiter: limiterFor(webhook.url),
    headerShapes: headerShapesOf(webhook.headers),
  }))
}

/**
 * One {@link Limiter} of `maxConcurrencyPerUrl` places per URL, made when a URL is first listed:
 * the requests in flight to one receiver are bounded over every destination that sends to it.
 */
export function urlLimiters(maxConcurrencyPerUrl: number): (url: string) => Limiter {
  const limiters = new Map<string, Limiter>()
  return (url) => {
    let limiter = limiters.get(url)
    if (limiter === undefined) {
      limiter = new Limiter(maxConcurrencyPerUrl)
      limiters.set(url, limiter)
    }
    return limiter
  }
}
