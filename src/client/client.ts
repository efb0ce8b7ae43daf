import type { ClientOptions, PlanOption } from './options.js'
import type { NoPlan, TrackingPlan } from '../core/plan.js'
import { ClientBase } from './client-base.js'
// Resolved per runtime by package.json "imports": the HTTP/1.1 stack and zlib on Node, ky (fetch in browsers)
// and CompressionStream elsewhere; on Node, a word when the process exits with messages unsent.
import { debugSetting, defaultTransport, gzip, otherNames, watchExit } from '#eventwire/client-transport'

export type { ClientEvents, CloseOptions, PlanViolationInfo, RetryInfo, SentInfo } from './client-base.js'

/**
 * Records identify, track, page, screen, group and alias calls, queues them in memory and sends
 * them in batches to `POST {endpoint}/v1/batch` in the background, with the Go analytics client's
 * semantics: a flush at `flushAt` messages or `flushAfter` ms, retries with backoff, and
 * `DEBUG=analytics` logging.
 *
 * Each call validates and serializes its message at once (throwing a typed error for bad input,
 * with nothing queued) and returns `false` when the queue is over its high-water mark: wait for `'drain'`
 * (or `await client.whenDrained()`) before producing more.
 *
 * On Node it sends with its own HTTP/1.1 stack over keep-alive connections, unless the `fetch` option is
 * given; in Deno, Bun and Workers, and on Node with `fetch`, it sends with `fetch` through ky; in
 * browsers with `fetch` itself. The runtime picks the transport (package.json "imports"); the API
 * is the same.
 *
 * @example
 * ```ts
 * import { Client } from 'eventwire'
 *
 * const client = new Client('WRITE_KEY', { endpoint: 'https://ingest.example.com' })
 * client.on('error', (error) => console.error(error.code, error.messages.length))
 * client.identify({ userId: 'u1', traits: { plan: 'pro' } })
 * client.track({ userId: 'u1', event: 'Signed Up', properties: { source: 'ad' } })
 * await client.close()
 * ```
 */
export class Client<Plan extends TrackingPlan | NoPlan = NoPlan> extends ClientBase<Plan> {
  /**
   * @param writeKey - The write key of your source.
   * @param options - Every one optional; with `plan` (a {@link definePlan} of schemas) the calls
   * are typed and checked by it.
   * @typeParam Plan - A tracking plan: given as a type (`new Client<ShopPlan>(...)`) to type the
   * calls, or inferred from the `plan` option. Without one, calls take any event and properties.
   * @throws {@link OptionsError} for a missing write key or an option it cannot use.
   */
  constructor(writeKey: string, options: ClientOptions & PlanOption<Plan> = {}) {
    super(writeKey, options, defaultTransport, gzip, { watchExit, otherNames, debugSetting })
  }
}
