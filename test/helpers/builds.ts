import { ClientBase } from '../../src/client/client-base.js'
import { gzip as webGzip, defaultTransport as webTransport } from '../../src/client/platform/web.js'
import { Client, type ClientOptions, type NoPlan, type PlanOption, type TrackingPlan } from '../../src/index.js'

/**
 * The `Client` as browsers, Deno, Bun and Workers get it (`#eventwire/client-transport` resolved to the web
 * module: ky over `fetch`, `CompressionStream`), runnable on Node. Tests get Node's by importing `Client` itself.
 */
export class WebClient<Plan extends TrackingPlan | NoPlan = NoPlan> extends ClientBase<Plan> {
  constructor(writeKey: string, options: ClientOptions & PlanOption<Plan> = {}) {
    super(writeKey, options, webTransport, webGzip)
  }
}

/**
 * The `Client` with each runtime's transport, for suites that run against real servers: ky over
 * `fetch` (browsers, Deno, Bun, Workers) and the HTTP/1.1 stack (Node). For `describe.each`.
 */
export const CLIENT_BUILDS: ReadonlyArray<readonly [name: string, Client: typeof WebClient]> = [
  ['web platform (ky over fetch)', WebClient],
  ['Node platform (HTTP/1.1 stack)', Client],
]
